// The two-launch reduction single_pass_reduce is measured against. Its first pass reads the
// input like a good single pass would (a grid that fills the GPU once, several loads in flight
// per thread), so the ratio measures what the single pass saves: the second launch and the
// wait between the two kernels.
#include "single_pass_reduce_baseline.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"
#include "single_pass_reduce.h"

namespace {

constexpr int kPassThreads = 256;
constexpr int kFinishThreads = 1024;
constexpr int kLoadsInFlight = 4;

// Halves the block's values in shared memory until s[0] holds their sum (kSize a power of two).
template <int kSize>
__device__ void tree_in_shared(long long* s) {
  for (int half = kSize / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kPassThreads)
    block_partials_kernel(const int* __restrict__ in, int n, long long* __restrict__ partial) {
  __shared__ long long s[kPassThreads];
  const std::size_t count = static_cast<std::size_t>(n);
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * kPassThreads;
  long long own = 0;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * kPassThreads + threadIdx.x;
       base < count; base += kLoadsInFlight * step) {
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k) {
      const std::size_t at = base + k * step;
      if (at < count) own += in[at];
    }
  }
  s[threadIdx.x] = own;
  __syncthreads();
  tree_in_shared<kPassThreads>(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void __launch_bounds__(kFinishThreads)
    finish_kernel(const long long* __restrict__ partial, int count, long long* __restrict__ out) {
  __shared__ long long s[kFinishThreads];
  long long own = 0;
  for (int b = threadIdx.x; b < count; b += kFinishThreads) own += partial[b];
  s[threadIdx.x] = own;
  __syncthreads();
  tree_in_shared<kFinishThreads>(s);
  if (threadIdx.x == 0) *out = s[0];
}

// Blocks of kPassThreads that fill every SM with threads: one wave of a grid-stride pass.
int full_grid() {
  static const int blocks = [] {
    int device = 0;
    int threads_per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                      device));
    return threads_per_sm / kPassThreads * course::sm_count();
  }();
  return blocks;
}

}  // namespace

void two_pass_reduce(const int* in, int n, long long* partial, long long* out,
                     cudaStream_t stream) {
  const std::size_t needed = (static_cast<std::size_t>(n) + kPassThreads - 1) / kPassThreads;
  const int blocks = static_cast<int>(std::max<std::size_t>(
      1, std::min({needed, static_cast<std::size_t>(full_grid()),
                   static_cast<std::size_t>(kSinglePassMaxBlocks)})));
  block_partials_kernel<<<blocks, kPassThreads, 0, stream>>>(in, n, partial);
  CUDA_CHECK_LAUNCH();
  finish_kernel<<<1, kFinishThreads, 0, stream>>>(partial, blocks, out);
  CUDA_CHECK_LAUNCH();
}
