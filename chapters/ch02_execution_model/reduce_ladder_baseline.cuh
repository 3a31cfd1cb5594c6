// Definitions of the course-owned helpers declared in reduce_ladder.h. Each rung's
// *_baseline.cu includes this file once, so every rung's test and benchmark binary has them.
#pragma once

#include <cub/device/device_reduce.cuh>

#include <algorithm>

#include "course/check.h"
#include "reduce_ladder.h"

namespace reduce_ladder_detail {

inline int sm_count() {
  static const int count = [] {
    int device = 0;
    int value = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device));
    return value;
  }();
  return count;
}

constexpr int kFinishThreads = 256;

// Grid-stride sum of the partials, a shuffle tree per block, one atomic per block.
__global__ void __launch_bounds__(kFinishThreads)
    sum_partials_kernel(const long long* __restrict__ partial, int count,
                        unsigned long long* __restrict__ out) {
  long long sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    sum += partial[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  __shared__ long long warp_sums[kFinishThreads / 32];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < kFinishThreads / 32 ? warp_sums[lane] : 0;
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    // Two's-complement addition is the same for signed and unsigned 64-bit values.
    if (lane == 0) atomicAdd(out, static_cast<unsigned long long>(sum));
  }
}

__global__ void fill_hashed_ints_kernel(int* data, std::size_t n, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = hashed_int(i, seed);
}

}  // namespace reduce_ladder_detail

void reduce_partials(const long long* partial, int count, long long* out, cudaStream_t stream) {
  using namespace reduce_ladder_detail;
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(long long), stream));
  if (count <= 0) return;
  const int blocks =
      std::min((count + kFinishThreads * 8 - 1) / (kFinishThreads * 8), sm_count() * 4);
  sum_partials_kernel<<<blocks, kFinishThreads, 0, stream>>>(
      partial, count, reinterpret_cast<unsigned long long*>(out));
  CUDA_CHECK_LAUNCH();
}

std::size_t cub_reduce_sum_temp_bytes(int n) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const int*>(nullptr),
                                    static_cast<long long*>(nullptr), n));
  return bytes;
}

void cub_reduce_sum(const int* in, int n, long long* out, void* temp, std::size_t temp_bytes,
                    cudaStream_t stream) {
  CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream));
}

void fill_hashed_ints(int* data, std::size_t n, std::uint32_t seed, cudaStream_t stream) {
  if (n == 0) return;
  const int blocks = reduce_ladder_detail::sm_count() * 8;
  reduce_ladder_detail::fill_hashed_ints_kernel<<<blocks, 256, 0, stream>>>(data, n, seed);
  CUDA_CHECK_LAUNCH();
}
