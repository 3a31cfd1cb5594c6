#include "graph_update.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"

constexpr int kThreads = 256;

// Given: the three passes. This exercise is about how one graph of them is changed and
// launched again, not about the kernels.
__global__ void __launch_bounds__(kThreads)
    diffuse_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n,
                   float coupling) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float left = in[i == 0 ? 0 : i - 1];
    const float right = in[i + 1 == n ? i : i + 1];
    out[i] = diffuse(left, in[i], right, coupling);
  }
}

__global__ void __launch_bounds__(kThreads)
    react_kernel(float* __restrict__ data, std::size_t n, float rate) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = react(data[i], rate);
}

__global__ void __launch_bounds__(kThreads)
    amplify_kernel(float* __restrict__ data, std::size_t n, float gain) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = amplify(data[i], gain);
}

// TODO: Describe each pass as a cudaKernelNodeParams: func (the kernel's address,
//       cast to void*), gridDim (enough blocks for n, at most four per SM:
//       course::sm_count() * 4), blockDim (kThreads), sharedMemBytes 0, and kernelParams: an
//       array of pointers to the argument values, one per kernel parameter, in order, each
//       pointing at a value of exactly the parameter's type. The runtime copies the values
//       during the call that takes the parameters, so they need only live until it returns.
//       The same description serves to add a node and, later, to change it in g.exec.

PipelineGraph build_pipeline_graph(const StepParams& first, std::size_t n, cudaStream_t stream) {
  PipelineGraph g;
  g.n = n;
  g.blocks = static_cast<int>(std::min(std::max<std::size_t>((n + kThreads - 1) / kThreads, 1),
                                       static_cast<std::size_t>(course::sm_count()) * 4));
  // TODO: Build the graph of one step with `first` explicitly:
  //       cudaGraphCreate(&g.graph, 0), then one cudaGraphAddKernelNode per pass, each
  //       depending on the one before (its dependencies: the previous node; none for the
  //       first), keeping the nodes in g.nodes: they are how run_pipeline_step names the nodes
  //       it changes. (Stream capture on a stream of your own builds the same chain, but
  //       cudaGraphGetNodes promises no order: find the nodes from the root along the edges.)
  //       Instantiate once, cudaGraphInstantiate(&g.exec, g.graph, 0), and
  //       cudaGraphUpload(g.exec, stream), so that the first step does not pay for setting
  //       the graph up on the device.
  (void)first; (void)stream;
  return g;
}

void run_pipeline_step(PipelineGraph& g, const StepParams& params, cudaStream_t stream) {
  // TODO: Change each pass of g.exec to this step's buffers and coefficients with
  //       cudaGraphExecKernelNodeSetParams(g.exec, g.nodes[stage], &node_params) (the node is
  //       named by the graph's node it was instantiated from), then cudaGraphLaunch(g.exec,
  //       stream). Do not wait for anything: the change reaches only later launches, so steps
  //       already enqueued keep their own parameters. Never cudaGraphInstantiate here, and
  //       never change the graph instead (cudaGraphKernelNodeSetParams edits g.graph, which
  //       the executable graph no longer reads).
  (void)g; (void)params; (void)stream;
}

void destroy_pipeline_graph(PipelineGraph& g) {
  // TODO: cudaGraphExecDestroy the executable graph and cudaGraphDestroy the graph
  //       (each only when not nullptr), then reset the handles to nullptr. A step still in
  //       flight finishes: the runtime frees the executable graph once it is done.
  (void)g;
}
