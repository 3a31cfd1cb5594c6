#include "smem_reduction_baseline.h"

#include <cub/device/device_reduce.cuh>

#include "course/check.h"

namespace {

constexpr int kThreads = 512;

// In-place tree over global memory: every step reads and writes the block's slice of scratch
// (through L1/L2), and __syncthreads() orders those global accesses within the block.
__global__ void __launch_bounds__(kThreads)
    global_inplace_kernel(const int* __restrict__ in, int n, long long* scratch,
                          unsigned long long* out) {
  const int t = threadIdx.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * 2 * kThreads;
  long long* slice = scratch + static_cast<std::size_t>(blockIdx.x) * kThreads;
  const std::size_t a = first + t, b = first + t + kThreads;
  slice[t] = (a < static_cast<std::size_t>(n) ? in[a] : 0) +
             static_cast<long long>(b < static_cast<std::size_t>(n) ? in[b] : 0);
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) slice[t] += slice[t + stride];
    __syncthreads();
  }
  // Two's-complement addition is the same for signed and unsigned 64-bit values.
  if (t == 0) atomicAdd(out, static_cast<unsigned long long>(slice[0]));
}

int blocks_for(int n) { return (n + 2 * kThreads - 1) / (2 * kThreads); }

}  // namespace

std::size_t smem_reduction_global_scratch_size(int n) {
  const int blocks = blocks_for(n > 0 ? n : 0);
  return static_cast<std::size_t>(blocks > 0 ? blocks : 1) * kThreads;
}

void smem_reduction_global_inplace(const int* in, int n, long long* scratch, long long* out,
                                   cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(long long), stream));
  if (n <= 0) return;
  global_inplace_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      in, n, scratch, reinterpret_cast<unsigned long long*>(out));
  CUDA_CHECK_LAUNCH();
}

std::size_t smem_reduction_cub_temp_bytes(int n) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const int*>(nullptr),
                                    static_cast<long long*>(nullptr), n));
  return bytes;
}

void smem_reduction_cub(const int* in, int n, long long* out, void* temp, std::size_t temp_bytes,
                        cudaStream_t stream) {
  CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream));
}
