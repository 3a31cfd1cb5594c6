#include "cluster_histogram_baseline.h"

#include "course/check.h"
#include "course/device.h"
#include "course/device_fill.cuh"
#include "course/device_random.h"

namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    global_atomics_kernel(const unsigned* __restrict__ in, std::size_t n,
                          unsigned* __restrict__ bins) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    atomicAdd(&bins[in[i]], 1u);
}

struct BinOf {
  std::uint64_t seed;
  unsigned num_bins;
  bool skewed;
  unsigned hot_bin;
  __device__ unsigned operator()(std::size_t i) const {
    const std::uint64_t h = course::hash_index(i, seed);
    // The high half decides hot or not (nine in ten), the low half picks the uniform bin.
    const bool hot = skewed && static_cast<std::uint32_t>(h >> 32) % 10u != 0u;
    return hot ? hot_bin : static_cast<std::uint32_t>(h) % num_bins;
  }
};

}  // namespace

void histogram_global_atomics(const unsigned* in, std::size_t n, unsigned* bins, int num_bins,
                              cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(bins, 0, sizeof(unsigned) * static_cast<std::size_t>(num_bins),
                             stream));
  if (n == 0) return;
  global_atomics_kernel<<<course::sm_count() * 8, kThreads, 0, stream>>>(in, n, bins);
  CUDA_CHECK_LAUNCH();
}

void histogram_fill(unsigned* data, std::size_t n, int num_bins, bool skewed, unsigned hot_bin,
                    std::uint64_t seed, cudaStream_t stream) {
  course::fill_by_index(data, n, stream,
                        BinOf{seed, static_cast<unsigned>(num_bins), skewed, hot_bin});
}
