// No graded performance: the manifest has no [[performance]] entry. Reports the kernel that
// reads the symbol next to the copy ceiling, for the curious.
#include "device_symbols.h"

#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 26;
  auto rng = course::make_rng("device_symbols_bench");
  const auto coefficients = course::random_floats(kCoefficientCount, -2.f, 2.f, rng);
  set_coefficients(coefficients.data(), 0, kCoefficientCount);
  course::DeviceBuffer<float> in(n), out(n);
  in.fill_bytes(0x3c);
  const double bytes = 2.0 * sizeof(float) * n;
  bench.copy_ceiling(static_cast<std::size_t>(bytes / 2));
  bench.time(
      "apply_coefficients", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { apply_coefficients(in.data(), out.data(), n, s); },
      course::TimedIo{{course::exact_output(out, "out")}});
}
