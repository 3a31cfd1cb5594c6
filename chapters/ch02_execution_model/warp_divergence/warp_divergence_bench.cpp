// warp_uniform_branches against the course's divergent_even_odd on the same 2^26 inputs. Both
// are bound by the branches' arithmetic, not by memory, so removing the divergence shows up as
// a speedup close to 2. For the same reason copying a remembered output would be far faster
// than the work: the calls alternate between the input and the input with one element changed
// (both branches are bijections, so that element's output changes too).
#include "warp_divergence.h"

#include <cstdint>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "warp_divergence_baseline.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 26;
  auto rng = course::make_rng("warp_divergence_bench");
  course::DeviceBuffer<unsigned> in(n), reference(n), out(n);
  const std::uint64_t seed = rng();
  course::fill_hashed(in.data(), n, seed, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const auto one_element_changed = course::alternate_element(
      in.data(), static_cast<std::size_t>(seed % n), [](unsigned value) { return value ^ 1u; });

  reference.fill_bytes(course::kPoisonByte);
  bench.time(
      "divergent_even_odd", n, course::Unit::Gelems,
      [&](cudaStream_t s) { divergent_even_odd(in.data(), reference.data(), n, s); },
      course::TimedIo{{course::exact_output(reference, "out")}, one_element_changed});
  const auto expected = reference.download();

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "warp_uniform_branches", n, course::Unit::Gelems,
      [&](cudaStream_t s) { warp_uniform_branches(in.data(), out.data(), n, s); },
      course::TimedIo{{course::exact_output(out, "out")}, one_element_changed});
  bench.check("warp_uniform_branches",
              course::compare_exact(expected, out.download(), {{}, "out"}));
}
