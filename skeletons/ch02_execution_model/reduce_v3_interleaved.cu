#include "reduce_v3_interleaved.h"

#include <cstddef>

#include "course/check.h"

// Pairs half a block apart, then a quarter, ...: contiguous threads, sequential addresses.
__global__ void interleaved_kernel(const int* __restrict__ in, int n,
                                   long long* __restrict__ partial) {
  extern __shared__ long long s[];
  // TODO: Load as in rung 1. Then for stride = blockDim.x / 2 down to 1 (halving),
  //       threads with tid < stride add s[tid + stride] into s[tid]; __syncthreads() after each
  //       step; thread 0 writes partial[blockIdx.x].
  (void)in; (void)n; (void)partial; (void)s;
}

void reduce_v3_interleaved(const int* in, int n, int block_size, long long* partial, long long* out,
                           cudaStream_t stream) {
  require_reduce_block_size(block_size);
  // TODO: Launch one block per block_size elements (ceil(n / block_size) blocks, none when
  //       n = 0) with block_size * sizeof(long long) bytes of dynamic shared memory, check the
  //       launch, then call reduce_partials(partial, blocks, out, stream) to add the partial
  //       sums (it writes 0 when blocks = 0).
  (void)in; (void)n; (void)partial; (void)out; (void)stream;
}
