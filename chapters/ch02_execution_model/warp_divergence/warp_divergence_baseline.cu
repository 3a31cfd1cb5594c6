#include "warp_divergence_baseline.h"

#include <algorithm>

#include "course/check.h"
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

__global__ void fill_kernel(unsigned* data, std::size_t n, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    data[i] = static_cast<unsigned>(x >> 32);
  }
}

int sm_count() {
  static const int count = [] {
    int device = 0;
    int value = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device));
    return value;
  }();
  return count;
}

}  // namespace

void divergent_even_odd(const unsigned* in, unsigned* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  const int threads = 256;
  const int blocks = std::min((n + threads - 1) / threads, sm_count() * 16);
  divergent_kernel<<<blocks, threads, 0, stream>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

void fill_hashed_uints(unsigned* data, std::size_t n, std::uint32_t seed, cudaStream_t stream) {
  if (n == 0) return;
  fill_kernel<<<sm_count() * 8, 256, 0, stream>>>(data, n, seed);
  CUDA_CHECK_LAUNCH();
}
