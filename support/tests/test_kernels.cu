#include "test_kernels.h"

#include "course/check.h"

namespace course_test {

namespace {

__global__ void write_range_kernel(float* data, std::ptrdiff_t first, std::ptrdiff_t last,
                                   float value) {
  const std::ptrdiff_t i = first + static_cast<std::ptrdiff_t>(blockIdx.x) * blockDim.x +
                           threadIdx.x;
  if (i < last) data[i] = value;
}

}  // namespace

void write_range(float* data, std::ptrdiff_t first, std::ptrdiff_t last, float value,
                 cudaStream_t stream) {
  if (last <= first) return;
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((last - first + threads - 1) / threads);
  write_range_kernel<<<blocks, threads, 0, stream>>>(data, first, last, value);
  CUDA_CHECK_LAUNCH();
}

}  // namespace course_test
