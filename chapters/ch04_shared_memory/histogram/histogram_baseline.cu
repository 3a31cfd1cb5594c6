#include "histogram_baseline.h"

#include <cub/device/device_histogram.cuh>

#include "course/check.h"
#include "course/device.h"
#include "course/device_fill.cuh"
#include "course/device_random.h"

namespace {

__global__ void global_atomics_kernel(const unsigned* __restrict__ in, std::size_t n,
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
    const std::uint64_t z = course::hash_index(i, seed);
    // The top 32 bits choose hot or not (9 in 10), the low 32 bits the uniform bin.
    const bool is_hot = skewed && static_cast<std::uint32_t>(z >> 32) % 10u != 0u;
    return is_hot ? hot_bin : static_cast<unsigned>(static_cast<std::uint32_t>(z) % num_bins);
  }
};

}  // namespace

void histogram_global_atomics(const unsigned* in, std::size_t n, unsigned* bins, int num_bins,
                              cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(bins, 0, sizeof(unsigned) * num_bins, stream));
  if (n == 0) return;
  global_atomics_kernel<<<course::sm_count() * 8, 256, 0, stream>>>(in, n, bins);
  CUDA_CHECK_LAUNCH();
}

std::size_t histogram_cub_temp_bytes(std::size_t n, int num_bins) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
      nullptr, bytes, static_cast<const unsigned*>(nullptr), static_cast<unsigned*>(nullptr),
      num_bins + 1, 0u, static_cast<unsigned>(num_bins), static_cast<long long>(n)));
  return bytes;
}

void histogram_cub(const unsigned* in, std::size_t n, unsigned* bins, int num_bins, void* temp,
                   std::size_t temp_bytes, cudaStream_t stream) {
  CUDA_CHECK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in, bins, num_bins + 1, 0u,
                                                 static_cast<unsigned>(num_bins),
                                                 static_cast<long long>(n), stream));
}

void histogram_fill(unsigned* data, std::size_t n, int num_bins, bool skewed, unsigned hot_bin,
                    std::uint64_t seed, cudaStream_t stream) {
  course::fill_by_index(data, n, stream,
                        BinOf{seed, static_cast<unsigned>(num_bins), skewed, hot_bin});
}
