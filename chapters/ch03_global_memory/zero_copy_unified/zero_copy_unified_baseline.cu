#include "zero_copy_unified_baseline.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"

namespace {

constexpr int kThreads = 256;
// The launch shape of a plain answer to saxpy_managed (one element per thread, the grid capped
// and the rest covered by a grid-stride loop), so that this call and the student's fault in the
// same pages in the same order, and their times can be compared.
constexpr int kMaxBlocks = 8192;

__global__ void course_saxpy_kernel(const float* __restrict__ in, float* __restrict__ out,
                                    float factor, float offset, std::size_t n) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step)
    out[i] = in[i] * factor + offset;
}

}  // namespace

void course_saxpy_managed(const float* in, float* out, float factor, float offset, int n,
                          cudaStream_t stream) {
  if (n <= 0) return;
  const std::size_t count = static_cast<std::size_t>(n);
  const int blocks = static_cast<int>(
      std::min<std::size_t>((count + kThreads - 1) / kThreads, kMaxBlocks));
  course_saxpy_kernel<<<blocks, kThreads, 0, stream>>>(in, out, factor, offset, count);
  CUDA_CHECK_LAUNCH();
}
