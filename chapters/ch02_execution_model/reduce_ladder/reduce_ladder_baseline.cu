// Definitions of the course-owned helpers declared in reduce_ladder.h: the second pass and CUB's
// sum (the course's copies of rungs 1, 5 and 6 are in reduce_ladder_rungs.cu). Compiled once per
// build (CUB makes it the slowest file of the ladder to compile) into the library every rung's
// test and benchmark binary links.
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"
#include "reduce_ladder.h"

namespace {

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

}  // namespace

void reduce_partials(const long long* partial, int count, long long* out, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(long long), stream));
  if (count <= 0) return;
  const int blocks =
      std::min((count + kFinishThreads * 8 - 1) / (kFinishThreads * 8), course::sm_count() * 4);
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
