// Course-owned GPU code for l2_persistence: the hot + streaming workload.
#include <algorithm>
#include <cstddef>
#include <numeric>

#include "course/check.h"
#include "l2_persistence_baseline.h"

// Each grid-wide step: every thread reads `loads` float4 of the stream (for each k, the grid
// reads one contiguous run, so the stream is coalesced) and gathers one hot sector. The gather
// counter runs on across steps and sweeps, so every sector is read once per n_sectors gathers,
// with loads * 16 * n_sectors bytes of stream in between.
__global__ void hot_stream_sum_kernel(const float4* __restrict__ big, std::size_t n_big,
                                      const float* __restrict__ hot, std::size_t n_sectors,
                                      std::size_t scatter, int loads, int sweeps,
                                      float* __restrict__ partial) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t me = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t per_step = threads * static_cast<std::size_t>(loads);
  std::size_t gather = me;
  float acc = 0.0f;
  for (int s = 0; s < sweeps; ++s)
    for (std::size_t base = 0; base < n_big; base += per_step, gather += threads) {
      float sum = 0.0f;
      // Eight independent loads in flight per thread: the stream must be DRAM-bound, not
      // latency-bound, or hits and misses would cost the same.
#pragma unroll 8
      for (int k = 0; k < loads; ++k) {
        const std::size_t i = base + static_cast<std::size_t>(k) * threads + me;
        if (i < n_big) {
          const float4 b = big[i];
          sum += (b.x + b.y) + (b.z + b.w);
        }
      }
      // A multiplicative (Weyl) walk: neighbouring lanes and neighbouring steps land on sectors
      // far apart, so neither coalescing nor any prefetch can hide a miss.
      const std::size_t sector = (gather % n_sectors) * scatter % n_sectors;
      acc += sum * hot[sector * 8];
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

void hot_stream_sum(const float4* big, std::size_t n_big, const float* hot, std::size_t n_hot,
                    int loads_per_gather, int sweeps, float* partial, int blocks,
                    cudaStream_t stream) {
  if (blocks <= 0) return;
  // Whole sectors only; a region shorter than one sector is gathered at index 0.
  const std::size_t n_sectors = std::max<std::size_t>(n_hot / 8, 1);
  // Odd multiplier near n_sectors / golden ratio, coprime with n_sectors so the walk is a
  // permutation: every sector once per n_sectors gathers.
  std::size_t scatter =
      static_cast<std::size_t>(0.6180339887 * static_cast<double>(n_sectors)) | 1;
  while (std::gcd(scatter, n_sectors) != 1) scatter += 2;
  const int loads = std::max(loads_per_gather, 1);
  hot_stream_sum_kernel<<<blocks, 256, 0, stream>>>(big, n_big, hot, n_sectors,
                                                    scatter % n_sectors, loads, sweeps, partial);
  CUDA_CHECK_LAUNCH();
}
