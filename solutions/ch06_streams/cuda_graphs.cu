#include "cuda_graphs.h"

#include <algorithm>
#include <cstddef>

#include "course/buffers.h"
#include "course/check.h"
#include "course/device.h"

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    step_kernel(float* __restrict__ data, std::size_t n, int step) {
  // Given: this exercise is about how the steps are launched, not about the kernel.
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = step_update(data[i], step);
}

StepGraph build_step_graph(float* data, std::size_t n, int steps, cudaStream_t stream) {
  StepGraph g;
  g.data = data;
  g.n = n;
  g.steps = steps;
  // @begin-solution: Record the chain by stream capture on a stream of your own (a
  // @hint: course::Stream): cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal),
  // @hint: then one step_kernel launch per step on it (kThreads threads, enough blocks for n
  // @hint: but at most four per SM, course::sm_count() * 4), exactly as you would launch them
  // @hint: for real (nothing runs while the stream is capturing; the stream's order becomes the
  // @hint: graph's edges), then cudaStreamEndCapture(capture, &g.graph). Check each launch with
  // @hint: CUDA_CHECK(cudaGetLastError()), not CUDA_CHECK_LAUNCH(): with COURSE_SYNC_LAUNCHES=1
  // @hint: that synchronises the device, which is not allowed during a capture. Then
  // @hint: cudaGraphInstantiate(&g.exec, g.graph, 0), and cudaGraphUpload(g.exec, stream) so
  // @hint: the first replay does not pay for setting the graph up on the device.
  const std::size_t needed = std::max<std::size_t>((n + kThreads - 1) / kThreads, 1);
  const int blocks = static_cast<int>(
      std::min(needed, static_cast<std::size_t>(course::sm_count()) * 4));
  {
    course::Stream capture;
    CUDA_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
    for (int step = 0; step < steps; ++step) {
      step_kernel<<<blocks, kThreads, 0, capture>>>(data, n, step);
      CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaStreamEndCapture(capture, &g.graph));
  }
  CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
  CUDA_CHECK(cudaGraphUpload(g.exec, stream));
  // @skeleton: (void)stream;
  // @end-solution
  return g;
}

void launch_step_graph(const StepGraph& g, cudaStream_t stream) {
  // @begin-solution: One cudaGraphLaunch of the executable graph on `stream`: the whole chain,
  // @hint: ordered on the stream like a single kernel.
  CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
  // @skeleton: (void)g; (void)stream;
  // @end-solution
}

void destroy_step_graph(StepGraph& g) {
  // @begin-solution: cudaGraphExecDestroy the executable graph and cudaGraphDestroy the graph
  // @hint: (each only when not nullptr), then reset the handles to nullptr. A replay still in
  // @hint: flight finishes: the runtime frees the executable graph once it is done.
  if (g.exec != nullptr) CUDA_CHECK(cudaGraphExecDestroy(g.exec));
  if (g.graph != nullptr) CUDA_CHECK(cudaGraphDestroy(g.graph));
  g.exec = nullptr;
  g.graph = nullptr;
  // @skeleton: (void)g;
  // @end-solution
}
