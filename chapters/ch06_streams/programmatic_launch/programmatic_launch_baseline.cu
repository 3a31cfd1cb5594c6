#include "programmatic_launch_baseline.h"

#include "course/check.h"
#include "course/device.h"
#include "programmatic_launch.h"

namespace {

// The solution's kernel, wait and trigger included: launched without the attribute they
// change nothing (the wait returns at once, the previous kernel having ended), so the two
// sides of the benchmark differ only in how the kernels are launched.
__global__ void __launch_bounds__(kStepThreads)
    plain_step_kernel(float* __restrict__ data, std::size_t n, int step) {
  __shared__ float coefficients[kStepCoefficients];
  coefficients[threadIdx.x] = step_coefficient(step, static_cast<int>(threadIdx.x));
  __syncthreads();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t rounds = first < n ? (n - first + stride - 1) / stride : 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::size_t i = first + (step % 2 == 0 ? round : rounds - 1 - round) * stride;
    data[i] = apply_step(data[i], coefficients);
  }
}

}  // namespace

void step_chain_plain_launches(float* data, std::size_t n, int steps, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned blocks = step_blocks(n, course::sm_count());
  for (int step = 0; step < steps; ++step) {
    plain_step_kernel<<<blocks, kStepThreads, 0, stream>>>(data, n, step);
    CUDA_CHECK_LAUNCH();
  }
}
