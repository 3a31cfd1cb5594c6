#include "concurrent_kernels_baseline.h"

#include "concurrent_kernels.h"
#include "course/check.h"

namespace {

// Launched as one block: its threads stride over the task's elements.
__global__ void serial_task_kernel(const float* __restrict__ in, float* __restrict__ out,
                                   std::size_t n, int iterations) {
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) out[i] = task_chain(in[i], iterations);
}

}  // namespace

void serial_tasks(const float* const* inputs, float* const* outputs, std::size_t n_each,
                  int tasks, int iterations, cudaStream_t stream) {
  if (n_each == 0) return;
  for (int t = 0; t < tasks; ++t) {
    serial_task_kernel<<<1, kTaskThreads, 0, stream>>>(inputs[t], outputs[t], n_each,
                                                       iterations);
    CUDA_CHECK_LAUNCH();
  }
}
