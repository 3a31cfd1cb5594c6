// The launch costs and limits quoted in chapter 07's notes (docs/ch07_dynamic_parallelism), measured
// on the GPU it runs on: what one kernel launch costs when the host makes it and when a kernel
// makes it (fire-and-forget, tail launch), how deep launches may nest, and what happens past
// the pending-launch limit. Every device-side launch's error code is recorded on the device,
// since a failed device launch never reaches the host as an error.
//
// It is a worked example of every launch form the chapter's exercises ask for, so it lives in
// an instructor folder, which the student template leaves out.
//
// Build and run, on a machine with a GPU, from the repository root:
//   nvcc -std=c++17 -O2 -arch=native -rdc=true -Isupport/include scripts/instructor/launch_cost.cu \
//        support/src/check.cpp -o build/launch_cost -lcudadevrt
//   build/launch_cost
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "course/buffers.h"
#include "course/check.h"

namespace {

constexpr int kLaunches = 1000;  // below the default pending-launch limit of 2048
constexpr int kRepeats = 7;
// The longest chain asked for: far past any documented limit, to find where one stops.
constexpr int kLongestChain = 100000;

__global__ void empty_kernel() {}

// Keeps its launch pending for about `ns` nanoseconds.
__global__ void sleeping_kernel(unsigned ns) {
  for (unsigned slept = 0; slept < ns; slept += 1000) __nanosleep(1000);
}

// One thread launches `count` sleeping grids fire-and-forget; errors[i] = launch i's error.
__global__ void fan_out_sleepers(int count, unsigned ns, int* errors) {
  for (int i = 0; i < count; ++i) {
    sleeping_kernel<<<1, 1, 0, cudaStreamFireAndForget>>>(ns);
    errors[i] = cudaGetLastError();
  }
}

// One thread launches `count` empty grids fire-and-forget; errors[i] = launch i's error.
__global__ void fan_out_from_one_thread(int count, int* errors) {
  for (int i = 0; i < count; ++i) {
    empty_kernel<<<1, 1, 0, cudaStreamFireAndForget>>>();
    errors[i] = cudaGetLastError();
  }
}

// Thread 0 of every block launches one empty grid fire-and-forget.
__global__ void fan_out_one_per_block(int* errors) {
  if (threadIdx.x != 0) return;
  empty_kernel<<<1, 1, 0, cudaStreamFireAndForget>>>();
  errors[blockIdx.x] = cudaGetLastError();
}

// A chain: each grid launches the next one, `remaining` times, into `stream`
// (cudaStreamTailLaunch or cudaStreamFireAndForget); deepest[0] = the depth the chain reached,
// errors[depth] = the error of the launch made at that depth.
__global__ void chain(int depth, int remaining, bool tail, int* deepest, int* errors) {
  atomicMax(deepest, depth);
  if (remaining == 0) return;
  if (tail)
    chain<<<1, 1, 0, cudaStreamTailLaunch>>>(depth + 1, remaining - 1, tail, deepest, errors);
  else
    chain<<<1, 1, 0, cudaStreamFireAndForget>>>(depth + 1, remaining - 1, tail, deepest, errors);
  errors[depth] = cudaGetLastError();
}

// The median of kRepeats stream times of `enqueue` (event to event on `stream`), in ms.
template <class Enqueue>
double median_ms(cudaStream_t stream, Enqueue enqueue) {
  course::Event start, stop;
  enqueue();  // warm-up: module loading, the device runtime's first use
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> times;
  for (int r = 0; r < kRepeats; ++r) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    enqueue();
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// How many of `errors` are not cudaSuccess, and the first failure's name.
void count_failures(const course::DeviceBuffer<int>& errors, int count, int* failed,
                    const char** first) {
  std::vector<int> host(count);
  CUDA_CHECK(cudaMemcpy(host.data(), errors.data(), count * sizeof(int),
                        cudaMemcpyDeviceToHost));
  *failed = 0;
  *first = "none";
  for (int e : host)
    if (e != cudaSuccess && (*failed)++ == 0) *first = cudaGetErrorName(cudaError_t(e));
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::size_t pending = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
  std::printf("# %s (cc %d.%d), default pending-launch limit %zu\n", prop.name, prop.major,
              prop.minor, pending);
  course::Stream stream;
  course::DeviceBuffer<int> errors(kLongestChain + 1), deepest(1);

  const double host = median_ms(stream, [&] {
    for (int i = 0; i < kLaunches; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  });
  const double one_thread = median_ms(stream, [&] {
    fan_out_from_one_thread<<<1, 1, 0, stream>>>(kLaunches, errors.data());
  });
  int failed = 0;
  const char* first = nullptr;
  count_failures(errors, kLaunches, &failed, &first);
  const double per_block = median_ms(stream, [&] {
    fan_out_one_per_block<<<kLaunches, 32, 0, stream>>>(errors.data());
  });
  int failed_blocks = 0;
  const char* first_blocks = nullptr;
  count_failures(errors, kLaunches, &failed_blocks, &first_blocks);
  const double no_launch = median_ms(stream, [&] {
    empty_kernel<<<kLaunches, 32, 0, stream>>>();  // the grid of fan_out_one_per_block, idle
  });

  std::printf("| launches of an empty grid | total (ms) | per launch (us) | failed |\n");
  std::printf("| --- | ---: | ---: | --- |\n");
  std::printf("| %d from the host, one stream | %.3f | %.2f | 0 |\n", kLaunches, host,
              1e3 * host / kLaunches);
  std::printf("| %d fire-and-forget from one device thread | %.3f | %.2f | %d (%s) |\n",
              kLaunches, one_thread, 1e3 * one_thread / kLaunches, failed, first);
  std::printf("| %d fire-and-forget, one per block of a %d-block grid | %.3f | %.2f | %d (%s) |\n",
              kLaunches, kLaunches, per_block, 1e3 * (per_block - no_launch) / kLaunches,
              failed_blocks, first_blocks);
  std::printf("(the per-block line subtracts the same grid without launches: %.3f ms)\n\n",
              no_launch);

  // Chains: one launch after another, each from the grid the previous one started.
  const int short_chain = 16;
  std::printf("| chain of %d launches | total (ms) | per launch (us) |\n", short_chain);
  std::printf("| --- | ---: | ---: |\n");
  const double host_chain = median_ms(stream, [&] {
    for (int i = 0; i < short_chain; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  });
  std::printf("| from the host, one stream | %.3f | %.2f |\n", host_chain,
              1e3 * host_chain / short_chain);
  for (bool tail : {true, false}) {
    const double t = median_ms(stream, [&] {
      chain<<<1, 1, 0, stream>>>(0, short_chain, tail, deepest.data(), errors.data());
    });
    std::printf("| %s | %.3f | %.2f |\n", tail ? "tail launches" : "fire-and-forget", t,
                1e3 * t / short_chain);
  }

  // Nesting: how deep does a chain go before the device runtime refuses a launch?
  std::printf("\n| chain asked for | launch form | deepest grid that ran | first refused launch |\n");
  std::printf("| ---: | --- | ---: | --- |\n");
  for (int levels : {24, 100, 1000, kLongestChain}) {
    for (bool tail : {true, false}) {
      CUDA_CHECK(cudaMemsetAsync(deepest.data(), 0, sizeof(int), stream));
      CUDA_CHECK(cudaMemsetAsync(errors.data(), 0, (levels + 1) * sizeof(int), stream));
      chain<<<1, 1, 0, stream>>>(0, levels, tail, deepest.data(), errors.data());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaStreamSynchronize(stream));
      int deep = 0;
      std::vector<int> host_errors(levels + 1);
      CUDA_CHECK(cudaMemcpy(&deep, deepest.data(), sizeof(int), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(host_errors.data(), errors.data(), (levels + 1) * sizeof(int),
                            cudaMemcpyDeviceToHost));
      int at = -1;
      for (int d = 0; d <= levels && at < 0; ++d)
        if (host_errors[d] != cudaSuccess) at = d;
      std::printf("| %d | %s | %d | %s |\n", levels, tail ? "tail launches" : "fire-and-forget",
                  deep, at < 0 ? "none" : cudaGetErrorName(cudaError_t(host_errors[at])));
    }
  }

  // 4096 launches of grids that each sleep 1 ms, from one thread. How many are pending at once
  // depends on how fast they start and end, which this program does not count: their all
  // succeeding shows no more than that.
  fan_out_sleepers<<<1, 1, 0, stream>>>(4096, 1000000u, errors.data());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  count_failures(errors, 4096, &failed, &first);
  std::printf("\n4096 fire-and-forget launches of 1 ms grids from one thread (limit %zu): "
              "%d refused (%s)\n", pending, failed, first);
  return 0;
}
