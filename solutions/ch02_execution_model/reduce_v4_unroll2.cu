#include "reduce_v4_unroll2.h"

#include <cstddef>

#include "course/check.h"

// Each block adds two data blocks while loading, then the interleaved tree.
__global__ void unroll2_kernel(const int* __restrict__ in, int n, long long* __restrict__ partial) {
  extern __shared__ long long s[];
  // @begin-solution: Block b covers 2 * blockDim.x elements from b * 2 * blockDim.x. Each
  // @hint: thread loads its 2 elements (blockDim.x apart, 0 past n) before adding them into
  // @hint: a long long, stores the sum in s[tid], then runs the interleaved tree;
  // @hint: thread 0 writes partial[blockIdx.x].
  const unsigned tid = threadIdx.x;
  const std::size_t step = blockDim.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * 2 * step + tid;
  const std::size_t end = static_cast<std::size_t>(n);
  // All loads are issued before the first add, so they are in flight together.
  const int v0 = i + 0 * step < end ? in[i + 0 * step] : 0;
  const int v1 = i + 1 * step < end ? in[i + 1 * step] : 0;
  s[tid] = static_cast<long long>(v0) + v1;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = s[0];
  // @skeleton: (void)in; (void)n; (void)partial; (void)s;
  // @end-solution
}

void reduce_v4_unroll2(const int* in, int n, int block_size, long long* partial, long long* out,
                       cudaStream_t stream) {
  require_reduce_block_size(block_size);
  // @begin-solution: Launch one block per 2 * block_size elements (none when n = 0) with
  // @hint: block_size * sizeof(long long) bytes of dynamic shared memory, check the launch, then
  // @hint: reduce_partials(partial, blocks, out, stream).
  // Two data blocks per thread block: half the grid of rung 3.
  const std::size_t per_block = 2 * static_cast<std::size_t>(block_size);
  const int blocks = static_cast<int>((static_cast<std::size_t>(n) + per_block - 1) / per_block);
  if (blocks > 0) {
    unroll2_kernel<<<blocks, block_size, block_size * sizeof(long long), stream>>>(in, n, partial);
    CUDA_CHECK_LAUNCH();
  }
  reduce_partials(partial, blocks, out, stream);  // n = 0 gives 0
  // @skeleton: (void)in; (void)n; (void)partial; (void)out; (void)stream;
  // @end-solution
}
