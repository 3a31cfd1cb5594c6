// No performance criteria: times one round trip of scale_on_device (allocate, copy in,
// launch, copy out, free) with a host clock, since the call is synchronous and uses the
// default stream, and reports how the time compares with the bytes moved over the bus.
#include "error_handling.h"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <vector>

#include "course/bench.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  const std::size_t n = std::size_t{1} << 26;  // 256 MiB each way
  auto rng = course::make_rng("error_handling_bench");
  const auto input = course::random_floats(n, -1.f, 1.f, rng);
  std::vector<float> output(n);

  // The first call also pays for loading the kernel; time the second.
  cudaError_t status = scale_on_device(input.data(), output.data(), n, 0.5f, 256);
  const auto start = std::chrono::steady_clock::now();
  if (status == cudaSuccess) status = scale_on_device(input.data(), output.data(), n, 0.5f, 256);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bench.require("round_trip", status == cudaSuccess,
                status == cudaSuccess ? "scale_on_device succeeded"
                                      : cudaGetErrorName(status));
  bool correct = status == cudaSuccess;
  for (std::size_t i = 0; correct && i < n; ++i) correct = output[i] == 0.5f * input[i];
  bench.require("round_trip_output", correct, "host_out must equal 0.5 * host_in");
  std::printf("scale_on_device, %zu floats: %.1f ms for the round trip, %.1f GB/s of host<->"
              "device traffic (pageable memory, so well under the link's peak)\n",
              n, seconds * 1e3, 2.0 * n * sizeof(float) / seconds / 1e9);
}
