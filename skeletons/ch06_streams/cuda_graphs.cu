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
  // TODO: Record the chain by stream capture on a stream of your own (a
  //       course::Stream): cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal),
  //       then one step_kernel launch per step on it (kThreads threads, enough blocks for n
  //       but at most four per SM, course::sm_count() * 4), exactly as you would launch them
  //       for real (nothing runs while the stream is capturing; the stream's order becomes the
  //       graph's edges), then cudaStreamEndCapture(capture, &g.graph). Check each launch with
  //       CUDA_CHECK(cudaGetLastError()), not CUDA_CHECK_LAUNCH(): with COURSE_SYNC_LAUNCHES=1
  //       that synchronises the device, which is not allowed during a capture. Then
  //       cudaGraphInstantiate(&g.exec, g.graph, 0), and cudaGraphUpload(g.exec, stream) so
  //       the first replay does not pay for setting the graph up on the device.
  (void)stream;
  return g;
}

void launch_step_graph(const StepGraph& g, cudaStream_t stream) {
  // TODO: One cudaGraphLaunch of the executable graph on `stream`: the whole chain,
  //       ordered on the stream like a single kernel.
  (void)g; (void)stream;
}

void destroy_step_graph(StepGraph& g) {
  // TODO: cudaGraphExecDestroy the executable graph and cudaGraphDestroy the graph
  //       (each only when not nullptr), then reset the handles to nullptr. A replay still in
  //       flight finishes: the runtime frees the executable graph once it is done.
  (void)g;
}
