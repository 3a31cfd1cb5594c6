#include "coalescing.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"

__global__ void offset_copy_kernel(const float* __restrict__ in, float* __restrict__ out, int n,
                                   int offset) {
  // @begin-solution: One element per thread: i = blockIdx.x * blockDim.x + threadIdx.x; when
  // @hint: i < n copy element offset + i. Keep consecutive threads on consecutive elements.
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[offset + i] = in[offset + i];
  // @skeleton: (void)in; (void)out; (void)n; (void)offset;
  // @end-solution
}

__global__ void strided_copy_kernel(const float* __restrict__ in, float* __restrict__ out, int n,
                                    int stride) {
  // @begin-solution: One element per thread; the element index is i * stride (compute it in
  // @hint: std::size_t: n * stride can exceed the range of int).
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const std::size_t j = static_cast<std::size_t>(i) * stride;
    out[j] = in[j];
  }
  // @skeleton: (void)in; (void)out; (void)n; (void)stride;
  // @end-solution
}

void offset_copy(const float* in, float* out, int n, int offset, cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: 256 threads per block, (n + 255) / 256 blocks, then CUDA_CHECK_LAUNCH().
  const int threads = 256;
  offset_copy_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(in, out, n, offset);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)offset; (void)stream;
  // @end-solution
}

void strided_copy(const float* in, float* out, int n, int stride, cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: Same launch shape as offset_copy.
  const int threads = 256;
  strided_copy_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(in, out, n, stride);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)stride; (void)stream;
  // @end-solution
}
