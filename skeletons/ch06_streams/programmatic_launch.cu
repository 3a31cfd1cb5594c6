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
  // TODO: From here on the kernel reads data, which the previous step writes. When
  //       this kernel was launched with programmatic stream serialization, the previous step
  //       may still be running: cudaGridDependencySynchronize() blocks until it has completed
  //       and its writes are visible (launched the ordinary way, it returns at once). Then
  //       let the next step start: cudaTriggerProgrammaticLaunchCompletion() allows the
  //       kernel launched after this one to be scheduled, so that its prologue runs while
  //       this kernel updates data. The trigger says nothing about memory: the next kernel's
  //       own cudaGridDependencySynchronize() is what makes this kernel's writes safe to read.
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
  // TODO: One launch of step_kernel per step, in order, on `stream`, with
  //       cudaLaunchKernelEx(&config, step_kernel, data, n, step). The configuration
  //       (cudaLaunchConfig_t) holds the grid (step_blocks(n, course::sm_count())), the block
  //       (kStepThreads), 0 bytes of dynamic shared memory, the stream, and one launch
  //       attribute (cudaLaunchAttribute): id cudaLaunchAttributeProgrammaticStreamSerialization,
  //       val.programmaticStreamSerializationAllowed = 1. Wrap each launch in CUDA_CHECK (it
  //       returns the launch's error). Do not wait for the stream.
  (void)data; (void)stream;
}
