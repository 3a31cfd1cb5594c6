#include "reduce_v7_complete_unroll.h"

#include <cstddef>

#include "course/check.h"

// Rung 6 with the block size known at compile time: the tree is written out, and every step
// that cannot apply to kBlock (and its barrier) is removed by the compiler.
template <int kBlock>
__global__ void __launch_bounds__(kBlock)
    complete_unroll_kernel(const int* __restrict__ in, int n, long long* __restrict__ partial) {
  __shared__ long long s[kBlock];
  // @begin-solution: Load eight elements per thread as in rung 6 (kBlock apart, 0 past n) into
  // @hint: s[tid]. Then write the tree out: if (kBlock >= 1024) { if (tid < 512) s[tid] +=
  // @hint: s[tid + 512]; __syncthreads(); } and the same for 512, 256 and 128; warp 0 sums
  // @hint: s[0..63] without block barriers (__syncwarp or __shfl_down_sync), and lane 0 writes
  // @hint: partial[blockIdx.x].
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * 8 * kBlock + tid;
  const std::size_t end = static_cast<std::size_t>(n);
  long long sum = 0;
  int v[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = i + j * kBlock < end ? in[i + j * kBlock] : 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) sum += v[j];
  s[tid] = sum;
  __syncthreads();
  if (kBlock >= 1024) {
    if (tid < 512) s[tid] += s[tid + 512];
    __syncthreads();
  }
  if (kBlock >= 512) {
    if (tid < 256) s[tid] += s[tid + 256];
    __syncthreads();
  }
  if (kBlock >= 256) {
    if (tid < 128) s[tid] += s[tid + 128];
    __syncthreads();
  }
  if (kBlock >= 128) {
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
  }
  if (tid < 32) {
    // The last 64 values: two per lane, then shuffles, which exchange registers directly.
    sum = s[tid] + s[tid + 32];
    sum += __shfl_down_sync(0xffffffffu, sum, 16);
    sum += __shfl_down_sync(0xffffffffu, sum, 8);
    sum += __shfl_down_sync(0xffffffffu, sum, 4);
    sum += __shfl_down_sync(0xffffffffu, sum, 2);
    sum += __shfl_down_sync(0xffffffffu, sum, 1);
    if (tid == 0) partial[blockIdx.x] = sum;
  }
  // @skeleton: (void)in; (void)n; (void)partial; (void)s;
  // @end-solution
}

void reduce_v7_complete_unroll(const int* in, int n, int block_size, long long* partial,
                               long long* out, cudaStream_t stream) {
  require_reduce_block_size(block_size);
  // @begin-solution: One block per 8 * block_size elements (none when n = 0); switch on
  // @hint: block_size to launch complete_unroll_kernel<64>, <128>, ... <1024>; check the launch;
  // @hint: then reduce_partials(partial, blocks, out, stream).
  const std::size_t per_block = 8 * static_cast<std::size_t>(block_size);
  const int blocks = static_cast<int>((static_cast<std::size_t>(n) + per_block - 1) / per_block);
  if (blocks > 0) {
    switch (block_size) {
      case 64: complete_unroll_kernel<64><<<blocks, 64, 0, stream>>>(in, n, partial); break;
      case 128: complete_unroll_kernel<128><<<blocks, 128, 0, stream>>>(in, n, partial); break;
      case 256: complete_unroll_kernel<256><<<blocks, 256, 0, stream>>>(in, n, partial); break;
      case 512: complete_unroll_kernel<512><<<blocks, 512, 0, stream>>>(in, n, partial); break;
      default: complete_unroll_kernel<1024><<<blocks, 1024, 0, stream>>>(in, n, partial); break;
    }
    CUDA_CHECK_LAUNCH();
  }
  reduce_partials(partial, blocks, out, stream);
  // @skeleton: (void)in; (void)n; (void)partial; (void)out; (void)stream;
  // @end-solution
}
