#include "reduce_v1_neighbored.h"

#include <cstddef>

#include "course/check.h"

// One block sums block_size consecutive elements in shared memory; thread 0 writes the sum.
__global__ void neighbored_kernel(const int* __restrict__ in, int n,
                                  long long* __restrict__ partial) {
  extern __shared__ long long s[];
  // TODO: Load in[i] (0 past n) into s[threadIdx.x] as a long long and wait for the
  //       block. Then for stride = 1, 2, 4, ... < blockDim.x, the threads whose index is a
  //       multiple of 2 * stride add s[tid + stride] into s[tid]; __syncthreads() after each
  //       step. Thread 0 finally writes s[0] to partial[blockIdx.x].
  (void)in; (void)n; (void)partial; (void)s;
}

void reduce_v1_neighbored(const int* in, int n, int block_size, long long* partial, long long* out,
                          cudaStream_t stream) {
  require_reduce_block_size(block_size);
  // TODO: Launch one block per block_size elements (ceil(n / block_size) blocks, none when
  //       n = 0) with block_size * sizeof(long long) bytes of dynamic shared memory, check the
  //       launch, then call reduce_partials(partial, blocks, out, stream) to add the partial
  //       sums (it writes 0 when blocks = 0).
  (void)in; (void)n; (void)partial; (void)out; (void)stream;
}
