// Effective bandwidth (bytes of x read + bytes of y written) of the student's curve against the
// course's all-__constant__ version, on the same 2^24 values in the same run. Two inputs:
// scattered (hashed x over [0, 1): about 30 distinct segments per warp, the scored one) and
// warp-uniform (all 32 elements of a warp in one segment, where constant memory broadcasts the
// segment reads too), plus a float4 copy of the same size for context.
#include "constant_broadcast.h"

#include <string>
#include <vector>

#include "constant_broadcast_baseline.h"
#include "constant_broadcast_reference.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 24;  // 64 MiB in and 64 out: more than the L2 holds
  const auto count = static_cast<std::size_t>(n);
  const double bytes = 2.0 * sizeof(float) * static_cast<double>(n);
  course::DeviceBuffer<float> x(count), y(count);
  auto rng = course::make_rng("constant_broadcast_bench_curve");
  const auto curve = constant_broadcast_random_curve(rng);
  constant_broadcast_serialised_set_curve(curve);
  constant_broadcast_set_curve(curve);

  const course::Tolerance tolerance{1e-5, 1e-5};
  using Launcher = void (*)(const float*, float*, int, cudaStream_t);
  // y's host copy for every check: a fresh 64 MiB array each time costs more than the copy.
  std::vector<float> y_host(count);
  // Poisons y, times `launch` on the current x, checks the last timed run against `expected`.
  const auto measure = [&](const std::string& name, Launcher launch,
                           const std::vector<float>& expected) {
    y.fill_bytes(course::kPoisonByte);
    bench.time(
        name, bytes, course::Unit::GBps, [&](cudaStream_t s) { launch(x.data(), y.data(), n, s); },
        course::TimedIo{{course::close_output(y, tolerance, "y")}});
    y.download_into(y_host);
    bench.check(name, course::compare_close(expected, y_host, tolerance, {{}, "y"}));
  };

  bench.copy_ceiling(count * sizeof(float), "copy");

  course::fill_hashed(x.data(), count, course::run_seed(), bench.stream(), 0.0f, 1.0f);
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  {
    const auto expected = constant_broadcast_reference(curve, x.download());
    measure("constant_serialised", constant_broadcast_serialised, expected);
    measure("constant_broadcast", constant_broadcast, expected);
  }

  constant_broadcast_fill_warp_uniform(x.data(), count, course::run_seed(), bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const auto expected = constant_broadcast_reference(curve, x.download());
  measure("constant_warp_uniform", constant_broadcast_serialised, expected);
  measure("constant_broadcast_warp_uniform", constant_broadcast, expected);
}
