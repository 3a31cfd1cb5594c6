#include "programmatic_launch.h"

#include <cstddef>

#include "course/check.h"
#include "course/device.h"

__global__ void __launch_bounds__(kStepThreads)
    step_kernel(float* __restrict__ data, std::size_t n, int step) {
  // Given: the prologue. This step's coefficients need nothing from the step before.
  __shared__ float coefficients[kStepCoefficients];
  coefficients[threadIdx.x] = step_coefficient(step, static_cast<int>(threadIdx.x));
  __syncthreads();
  // @begin-solution: From here on the kernel reads data, which the previous step writes. When
  // @hint: this kernel was launched with programmatic stream serialization, the previous step
  // @hint: may still be running: cudaGridDependencySynchronize() blocks until it has completed
  // @hint: and its writes are visible (launched the ordinary way, it returns at once). Then
  // @hint: let the next step start: cudaTriggerProgrammaticLaunchCompletion() allows the
  // @hint: kernel launched after this one to be scheduled, so that its prologue runs while
  // @hint: this kernel updates data. The trigger says nothing about memory: the next kernel's
  // @hint: own cudaGridDependencySynchronize() is what makes this kernel's writes safe to read.
  cudaGridDependencySynchronize();
  cudaTriggerProgrammaticLaunchCompletion();
  // @end-solution
  // Given: the update, a grid-stride loop whose rounds run backwards on odd steps. A step
  // that read data before the step before had finished would meet first the elements that
  // step writes last, so the tests see such a read instead of the steps' equal pace hiding it.
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t rounds = first < n ? (n - first + stride - 1) / stride : 0;
  for (std::size_t round = 0; round < rounds; ++round) {
    const std::size_t i = first + (step % 2 == 0 ? round : rounds - 1 - round) * stride;
    data[i] = apply_step(data[i], coefficients);
  }
}

void run_step_chain(float* data, std::size_t n, int steps, cudaStream_t stream) {
  if (steps <= 0 || n == 0) return;
  // @begin-solution: One launch of step_kernel per step, in order, on `stream`, with
  // @hint: cudaLaunchKernelEx(&config, step_kernel, data, n, step). The configuration
  // @hint: (cudaLaunchConfig_t) holds the grid (step_blocks(n, course::sm_count())), the block
  // @hint: (kStepThreads), 0 bytes of dynamic shared memory, the stream, and one launch
  // @hint: attribute (cudaLaunchAttribute): id cudaLaunchAttributeProgrammaticStreamSerialization,
  // @hint: val.programmaticStreamSerializationAllowed = 1. Wrap each launch in CUDA_CHECK (it
  // @hint: returns the launch's error). Do not wait for the stream.
  cudaLaunchAttribute programmatic{};
  programmatic.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  programmatic.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(step_blocks(n, course::sm_count()));
  config.blockDim = dim3(kStepThreads);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = &programmatic;
  config.numAttrs = 1;
  for (int step = 0; step < steps; ++step)
    CUDA_CHECK(cudaLaunchKernelEx(&config, step_kernel, data, n, step));
  // @skeleton: (void)data; (void)stream;
  // @end-solution
}
