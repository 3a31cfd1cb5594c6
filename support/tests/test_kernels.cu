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

constexpr int kSumThreads = 256;

__global__ void sum_ints_kernel(const int* in, int n, long long* out) {
  __shared__ long long partial[kSumThreads];
  long long total = 0;
  for (int i = threadIdx.x; i < n; i += kSumThreads) total += in[i];
  partial[threadIdx.x] = total;
  __syncthreads();
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void spin(long long cycles, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(cycles);
  CUDA_CHECK_LAUNCH();
}

void sum_ints(const int* in, int n, long long* out, cudaStream_t stream) {
  sum_ints_kernel<<<1, kSumThreads, 0, stream>>>(in, n, out);
  CUDA_CHECK_LAUNCH();
}

void write_range(float* data, std::ptrdiff_t first, std::ptrdiff_t last, float value,
                 cudaStream_t stream) {
  if (last <= first) return;
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((last - first + threads - 1) / threads);
  write_range_kernel<<<blocks, threads, 0, stream>>>(data, first, last, value);
  CUDA_CHECK_LAUNCH();
}

}  // namespace course_test
