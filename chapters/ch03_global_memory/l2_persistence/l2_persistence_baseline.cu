// Course-owned GPU code for l2_persistence: the hot + streaming workload and an input fill.
#include <cstddef>

#include "course/check.h"
#include "l2_persistence.h"

__global__ void hot_stream_sum_kernel(const float2* __restrict__ big,
                                      const float* __restrict__ hot, std::size_t n_hot,
                                      int passes, int sweeps, float* __restrict__ partial) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int s = 0; s < sweeps; ++s)
    for (int p = 0; p < passes; ++p) {
      const float2* chunk = big + static_cast<std::size_t>(p) * n_hot;
      for (std::size_t i = first; i < n_hot; i += stride) {
        const float2 b = chunk[i];
        acc += b.x * hot[i] + b.y;
      }
    }
  // Fixed-order reduction inside the block, so every run gives the same partial sums.
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  __shared__ float warp_sums[32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) total += warp_sums[w];
    partial[blockIdx.x] = total;
  }
}

void hot_stream_sum(const float2* big, const float* hot, std::size_t n_hot, int passes,
                    int sweeps, float* partial, int blocks, cudaStream_t stream) {
  hot_stream_sum_kernel<<<blocks, 256, 0, stream>>>(big, hot, n_hot, passes, sweeps, partial);
  CUDA_CHECK_LAUNCH();
}

__global__ void fill_hash_kernel(float* data, std::size_t n, unsigned long long seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    unsigned long long h = seed ^ i;  // splitmix64 finaliser
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    data[i] = static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
}

void fill_hash(float* data, std::size_t n, unsigned long long seed, cudaStream_t stream) {
  if (n == 0) return;
  fill_hash_kernel<<<4096, 256, 0, stream>>>(data, n, seed);
  CUDA_CHECK_LAUNCH();
}
