#include "reduce_v6_unroll_last_warp.h"

#include <cstddef>

#include "course/check.h"

// The last warp of the tree: sums s[0..63] into s[0] with no block barrier (rules in the
// header). The tests also call it with the warp's lanes split across two branches.
__device__ void warp_reduce_last(long long* s, unsigned lane) {
  // @begin-solution: For offset = 32, 16, 8, 4, 2, 1: each lane adds s[lane + offset] to its
  // @hint: running sum and stores it in s[lane]. Lanes are not in lockstep since Volta, so put
  // @hint: __syncwarp() after the reads (nobody overwrites a value another lane still needs)
  // @hint: and after the writes (the next step reads what the others wrote). `volatile` alone
  // @hint: orders nothing between lanes.
  long long sum = s[lane];
#pragma unroll
  for (unsigned offset = 32; offset > 0; offset /= 2) {
    sum += s[lane + offset];
    __syncwarp();
    s[lane] = sum;
    __syncwarp();
  }
  // @skeleton: (void)s; (void)lane;
  // @end-solution
}

// Rung 5 with the last warp's steps done without block barriers.
__global__ void unroll_last_warp_kernel(const int* __restrict__ in, int n, long long* __restrict__ partial) {
  extern __shared__ long long s[];
  // @begin-solution: Block b covers 8 * blockDim.x elements from b * 8 * blockDim.x. Each
  // @hint: thread loads its 8 elements (blockDim.x apart, 0 past n) before adding them into
  // @hint: a long long, stores the sum in s[tid], then runs the interleaved tree while
  // @hint: stride > 32 and lets warp 0 finish with warp_reduce_last(s, tid).
  const unsigned tid = threadIdx.x;
  const std::size_t step = blockDim.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * 8 * step + tid;
  const std::size_t end = static_cast<std::size_t>(n);
  // All loads are issued before the first add, so they are in flight together.
  const int v0 = i + 0 * step < end ? in[i + 0 * step] : 0;
  const int v1 = i + 1 * step < end ? in[i + 1 * step] : 0;
  const int v2 = i + 2 * step < end ? in[i + 2 * step] : 0;
  const int v3 = i + 3 * step < end ? in[i + 3 * step] : 0;
  const int v4 = i + 4 * step < end ? in[i + 4 * step] : 0;
  const int v5 = i + 5 * step < end ? in[i + 5 * step] : 0;
  const int v6 = i + 6 * step < end ? in[i + 6 * step] : 0;
  const int v7 = i + 7 * step < end ? in[i + 7 * step] : 0;
  s[tid] = static_cast<long long>(v0) + v1 + v2 + v3 + v4 + v5 + v6 + v7;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 32; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) warp_reduce_last(s, tid);
  if (tid == 0) partial[blockIdx.x] = s[0];
  // @skeleton: (void)in; (void)n; (void)partial; (void)s;
  // @end-solution
}

void reduce_v6_unroll_last_warp(const int* in, int n, int block_size, long long* partial, long long* out,
                                cudaStream_t stream) {
  require_reduce_block_size(block_size);
  // @begin-solution: Launch one block per 8 * block_size elements (none when n = 0) with
  // @hint: block_size * sizeof(long long) bytes of dynamic shared memory, check the launch, then
  // @hint: reduce_partials(partial, blocks, out, stream).
  // Eight data blocks per thread block, as in rung 5.
  const std::size_t per_block = 8 * static_cast<std::size_t>(block_size);
  const int blocks = static_cast<int>((static_cast<std::size_t>(n) + per_block - 1) / per_block);
  if (blocks > 0) {
    unroll_last_warp_kernel<<<blocks, block_size, block_size * sizeof(long long), stream>>>(in, n, partial);
    CUDA_CHECK_LAUNCH();
  }
  reduce_partials(partial, blocks, out, stream);  // n = 0 gives 0
  // @skeleton: (void)in; (void)n; (void)partial; (void)out; (void)stream;
  // @end-solution
}
