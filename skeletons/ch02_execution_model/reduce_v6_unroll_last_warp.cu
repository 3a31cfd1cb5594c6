#include "reduce_v6_unroll_last_warp.h"

#include <cstddef>

#include "course/check.h"

// The last warp of the tree: sums s[0..63] into s[0] with no block barrier (rules in the
// header). The tests also call it with the warp's lanes split across two branches.
__device__ void warp_reduce_last(long long* s, unsigned lane) {
  // TODO: For offset = 32, 16, 8, 4, 2, 1: each lane adds s[lane + offset] to its
  //       running sum and stores it in s[lane]. Lanes are not in lockstep since Volta, so put
  //       __syncwarp() after the reads (nobody overwrites a value another lane still needs)
  //       and after the writes (the next step reads what the others wrote). `volatile` alone
  //       orders nothing between lanes.
  (void)s; (void)lane;
}

// Rung 5 with the last warp's steps done without block barriers.
__global__ void unroll_last_warp_kernel(const int* __restrict__ in, int n, long long* __restrict__ partial) {
  extern __shared__ long long s[];
  // TODO: Block b covers 8 * blockDim.x elements from b * 8 * blockDim.x. Each
  //       thread loads its 8 elements (blockDim.x apart, 0 past n) before adding them into
  //       a long long, stores the sum in s[tid], then runs the interleaved tree while
  //       stride > 32 and lets warp 0 finish with warp_reduce_last(s, tid).
  (void)in; (void)n; (void)partial; (void)s;
}

void reduce_v6_unroll_last_warp(const int* in, int n, int block_size, long long* partial, long long* out,
                                cudaStream_t stream) {
  require_reduce_block_size(block_size);
  // TODO: Launch one block per 8 * block_size elements (none when n = 0) with
  //       block_size * sizeof(long long) bytes of dynamic shared memory, check the launch, then
  //       reduce_partials(partial, blocks, out, stream).
  (void)in; (void)n; (void)partial; (void)out; (void)stream;
}
