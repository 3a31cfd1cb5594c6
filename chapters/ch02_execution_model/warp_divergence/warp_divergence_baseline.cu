#include "warp_divergence_baseline.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"
#include "warp_divergence.h"

namespace {

__global__ void divergent_kernel(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                 int n) {
  const int stride = gridDim.x * blockDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    // Neighbouring lanes disagree: the warp runs even_branch with the odd lanes masked off,
    // then odd_branch with the even lanes masked off.
    if (i % 2 == 0)
      out[i] = even_branch(in[i]);
    else
      out[i] = odd_branch(in[i]);
  }
}

}  // namespace

void divergent_even_odd(const unsigned* in, unsigned* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  const int threads = 256;
  const int blocks = std::min((n + threads - 1) / threads, course::sm_count() * 16);
  divergent_kernel<<<blocks, threads, 0, stream>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}
