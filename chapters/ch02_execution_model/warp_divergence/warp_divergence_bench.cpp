// warp_uniform_branches against the course's divergent_even_odd on the same 2^26 inputs. Both
// are bound by the branches' arithmetic, not by memory, so removing the divergence shows up as
// a speedup close to 2.
#include "warp_divergence.h"

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "warp_divergence_baseline.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 26;
  auto rng = course::make_rng("warp_divergence_bench");
  course::DeviceBuffer<unsigned> in(n), reference(n), out(n);
  course::fill_hashed(in.data(), n, rng(), bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));

  reference.fill_bytes(course::kPoisonByte);
  bench.time("divergent_even_odd", n, course::Unit::Gelems,
             [&](cudaStream_t s) { divergent_even_odd(in.data(), reference.data(), n, s); });
  const auto expected = reference.download();

  out.fill_bytes(course::kPoisonByte);
  bench.time("warp_uniform_branches", n, course::Unit::Gelems,
             [&](cudaStream_t s) { warp_uniform_branches(in.data(), out.data(), n, s); });
  bench.check("warp_uniform_branches", course::compare_exact(expected, out.download(), {{}, "out"}));
}
