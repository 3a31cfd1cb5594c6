// Effective bandwidth of vector_add (two floats read, one written per element) against the
// in-run copy ceiling on the same number of bytes.
#include "vector_add.h"

#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"
#include "vector_add_reference.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 26;  // 256 MiB per array: five times the L2 of an H100 or H200
  const double bytes = 3.0 * sizeof(float) * n;
  auto rng = course::make_rng("vector_add_bench");
  const auto a_host = course::random_floats(n, -1.f, 1.f, rng);
  const auto b_host = course::random_floats(n, -1.f, 1.f, rng);
  course::DeviceBuffer<float> a(a_host), b(b_host), c(n);
  c.fill_bytes(course::kPoisonByte);

  bench.copy_ceiling(static_cast<std::size_t>(bytes / 2));
  bench.time(
      "vector_add", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { vector_add(a.data(), b.data(), c.data(), n, s); },
      course::TimedIo{{course::exact_output(c, "c")}});
  bench.check("vector_add", course::compare_exact(vector_add_reference(a_host, b_host),
                                                  c.download(), {{}, "c"}));
}
