#include "host_functions.h"

#include <algorithm>
#include <memory>

#include "course/check.h"
#include "course/device.h"

namespace {

constexpr int kThreads = 256;

}  // namespace

// Step 1 (given): block k counts the levels of pixels k * blockDim.x + t, strided by the grid,
// straight into its own row block_histograms[k * kLevels ...] with global atomics. (Chapter 04's
// histogram exercise is the fast way, privatised in shared memory; this exercise is not timed.)
__global__ void block_histograms_kernel(const unsigned char* __restrict__ pixels, std::size_t n,
                                        unsigned int* __restrict__ block_histograms) {
  unsigned int* const counts = block_histograms + static_cast<std::size_t>(blockIdx.x) * kLevels;
  for (int level = threadIdx.x; level < kLevels; level += blockDim.x) counts[level] = 0;
  __syncthreads();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    atomicAdd(&counts[pixels[i]], 1u);
}

// Step 5 (given): every pixel through the table.
__global__ void apply_lut_kernel(const unsigned char* __restrict__ pixels,
                                 const float* __restrict__ lut, float* __restrict__ intensities,
                                 std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    intensities[i] = lut[pixels[i]];
}

// @begin-solution: Step 3, the host step: a context struct holding what it needs (the pinned
// @hint: counts, the pinned table, n) and a function void CUDART_CB f(void* user_data) that
// @hint: turns the kHistogramBlocks * kLevels counts into the kLevels intensities with
// @hint: equalised_intensity. It runs on a thread of the CUDA driver: no CUDA calls in it.
// @hint: It deletes the context when done (after a sticky CUDA error the stream never calls it
// @hint: and the context leaks, which this exercise accepts: host_functions.h says why).
namespace {

// What one call's host step needs; made with new by equalise, deleted by the host step. After
// a sticky error in the CUDA context the stream never calls build_lut and the job leaks: the
// process cannot use CUDA again anyway (host_functions.h says more).
struct LutJob {
  const unsigned int* block_histograms;  // pinned, filled by the copy before the host step
  float* lut;                            // pinned, read by the copy after it
  std::size_t total;
};

void CUDART_CB build_lut(void* user_data) {
  const std::unique_ptr<LutJob> job(static_cast<LutJob*>(user_data));
  std::uint64_t histogram[kLevels] = {};
  for (int block = 0; block < kHistogramBlocks; ++block)
    for (int level = 0; level < kLevels; ++level)
      histogram[level] += job->block_histograms[block * kLevels + level];
  const auto first_present = std::find_if(histogram, histogram + kLevels,
                                          [](std::uint64_t count) { return count > 0; });
  const std::uint64_t lowest = first_present == histogram + kLevels ? 0 : *first_present;
  std::uint64_t cumulative = 0;
  for (int level = 0; level < kLevels; ++level) {
    cumulative += histogram[level];
    job->lut[level] = equalised_intensity(level, cumulative, lowest, job->total);
  }
}

}  // namespace
// @end-solution

void equalise(const unsigned char* pixels, float* intensities, std::size_t n,
              const EqualiseScratch& scratch, cudaStream_t stream) {
  if (n == 0) return;
  const int apply_blocks = static_cast<int>(
      std::min<std::size_t>((n + kThreads - 1) / kThreads, course::sm_count() * 8));
  // @begin-solution: Enqueue on `stream`, in order: block_histograms_kernel (kHistogramBlocks
  // @hint: blocks of kThreads), cudaMemcpyAsync of the counts to the pinned copy, your host
  // @hint: step with cudaLaunchHostFunc (its context made with new just before), cudaMemcpyAsync
  // @hint: of the pinned table to scratch.lut, apply_lut_kernel (apply_blocks blocks). The
  // @hint: stream keeps them in order; do not wait for any of them.
  block_histograms_kernel<<<kHistogramBlocks, kThreads, 0, stream>>>(pixels, n,
                                                                     scratch.block_histograms);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpyAsync(scratch.host_block_histograms, scratch.block_histograms,
                             sizeof(unsigned int) * kHistogramBlocks * kLevels,
                             cudaMemcpyDeviceToHost, stream));
  auto job = std::make_unique<LutJob>(LutJob{scratch.host_block_histograms, scratch.host_lut, n});
  CUDA_CHECK(cudaLaunchHostFunc(stream, build_lut, job.get()));
  job.release();  // the host step owns it now
  CUDA_CHECK(cudaMemcpyAsync(scratch.lut, scratch.host_lut, sizeof(float) * kLevels,
                             cudaMemcpyHostToDevice, stream));
  apply_lut_kernel<<<apply_blocks, kThreads, 0, stream>>>(pixels, scratch.lut, intensities, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)pixels; (void)intensities; (void)scratch; (void)stream; (void)apply_blocks;
  // @end-solution
}
