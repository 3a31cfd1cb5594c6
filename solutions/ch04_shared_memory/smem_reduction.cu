#include "smem_reduction.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"

// Each thread first adds many inputs in a register (a grid-stride loop: every load coalesced,
// many in flight), then the block combines its blockDim.x partial sums in shared memory, and
// one thread per block adds the block's total to *out with a 64-bit atomic.
__global__ void smem_reduction_kernel(const int* __restrict__ in, int n,
                                      unsigned long long* __restrict__ out) {
  // @begin-solution: Declare the block's array as extern __shared__ long long partial[];
  // @hint: (its size is the launch's third parameter). Sum in[i] for i = global thread index,
  // @hint: += gridDim.x * blockDim.x, into a long long; store it in partial[threadIdx.x];
  // @hint: __syncthreads(); then halve: for stride = blockDim.x / 2 down to 1, threads below
  // @hint: stride add partial[t + stride], with a __syncthreads() after every step, outside
  // @hint: the if. Thread 0 adds partial[0] to *out with atomicAdd (unsigned long long: the
  // @hint: bits of a two's-complement sum are the same).
  extern __shared__ long long partial[];
  const int t = threadIdx.x;
  long long sum = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + t;
       i < static_cast<std::size_t>(n); i += stride)
    sum += in[i];
  partial[t] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) partial[t] += partial[t + s];
    // Outside the if: every thread of the block must reach every barrier.
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, static_cast<unsigned long long>(partial[0]));
  // @skeleton: (void)in; (void)n; (void)out;
  // @end-solution
}

void smem_reduction(const int* in, int n, int block_size, long long* out, cudaStream_t stream) {
  smem_reduction_require_block_size(block_size);
  // @begin-solution: Zero *out with cudaMemsetAsync on `stream` (the blocks add into it);
  // @hint: for n > 0 launch enough blocks to fill the GPU (a few for each of the
  // @hint: course::sm_count() SMs, never more than n / block_size rounded up) with
  // @hint: block_size * sizeof(long long) bytes of dynamic shared memory, then
  // @hint: CUDA_CHECK_LAUNCH().
  CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(long long), stream));
  if (n <= 0) return;
  // 2048 resident threads per SM: enough blocks for full occupancy, few enough that the
  // per-block tree and atomic are a small cost.
  const int wanted = course::sm_count() * (2048 / block_size);
  const int blocks = std::max(1, std::min((n + block_size - 1) / block_size, wanted));
  const std::size_t shared_bytes = static_cast<std::size_t>(block_size) * sizeof(long long);
  smem_reduction_kernel<<<blocks, block_size, shared_bytes, stream>>>(
      in, n, reinterpret_cast<unsigned long long*>(out));
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)n; (void)out; (void)stream;
  // @end-solution
}
