#include "histogram.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"

namespace {

constexpr int kThreads = 256;

}  // namespace

// One private histogram per block in dynamic shared memory: zero it, count this block's share
// of the input with shared-memory atomics, then add each non-zero bin to the global histogram
// once per block.
__global__ void __launch_bounds__(kThreads) histogram_shared_kernel(const unsigned* __restrict__ in, std::size_t n,
                                        unsigned* __restrict__ bins, int num_bins) {
  // @begin-solution: extern __shared__ unsigned local[]; (num_bins words, sized at launch).
  // @hint: Zero local[] with a block-stride loop, __syncthreads(), then a grid-stride loop over
  // @hint: the input with atomicAdd(&local[in[i]], 1u), __syncthreads(), then a block-stride
  // @hint: loop adding each non-zero local[b] to bins[b] with one global atomicAdd.
  extern __shared__ unsigned local[];
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) local[b] = 0;
  // Every thread may count into a bin another thread zeroed.
  __syncthreads();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    atomicAdd(&local[in[i]], 1u);
  // The merge reads bins other threads counted into.
  __syncthreads();
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&bins[b], local[b]);
  // @skeleton: (void)in; (void)n; (void)bins; (void)num_bins;
  // @end-solution
}

// Too many bins for a private copy: count straight into global memory (rarely contended,
// since the values spread over so many bins).
__global__ void __launch_bounds__(kThreads) histogram_global_kernel(const unsigned* __restrict__ in, std::size_t n,
                                        unsigned* __restrict__ bins) {
  // @begin-solution: A grid-stride loop with atomicAdd(&bins[in[i]], 1u).
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    atomicAdd(&bins[in[i]], 1u);
  // @skeleton: (void)in; (void)n; (void)bins;
  // @end-solution
}

void histogram(const unsigned* in, std::size_t n, unsigned* bins, int num_bins,
               cudaStream_t stream) {
  // @begin-solution: Zero bins with cudaMemsetAsync on `stream` (the kernels add into it; this
  // @hint: also writes every bin when n = 0). For n > 0 launch histogram_shared_kernel with
  // @hint: num_bins * sizeof(unsigned) bytes of dynamic shared memory when that fits 48 KiB
  // @hint: (a few blocks for each of the course::sm_count() SMs, enough to fill the GPU), else
  // @hint: histogram_global_kernel; then CUDA_CHECK_LAUNCH().
  CUDA_CHECK(cudaMemsetAsync(bins, 0, sizeof(unsigned) * static_cast<std::size_t>(num_bins),
                             stream));
  if (n == 0) return;
  const std::size_t sms = static_cast<std::size_t>(course::sm_count());
  // Privatise while a block's copy fits the default 48 KiB of shared memory; beyond that, the
  // per-block zeroing and merging of tens of thousands of bins would cost more than it saves.
  constexpr int kMaxSharedBins = 48 * 1024 / static_cast<int>(sizeof(unsigned));
  const std::size_t needed = (n + kThreads - 1) / kThreads;
  if (num_bins <= kMaxSharedBins) {
    // Eight blocks of 256 threads per SM fill it; each block then covers many values, so its
    // zeroing and merging of num_bins words are a small cost.
    const int blocks = static_cast<int>(std::min(needed, sms * 8));
    histogram_shared_kernel<<<blocks, kThreads, sizeof(unsigned) * num_bins, stream>>>(
        in, n, bins, num_bins);
  } else {
    const int blocks = static_cast<int>(std::min(needed, sms * 8));
    histogram_global_kernel<<<blocks, kThreads, 0, stream>>>(in, n, bins);
  }
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)n; (void)bins; (void)num_bins; (void)stream;
  // @end-solution
}
