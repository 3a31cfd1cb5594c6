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

// @begin-solution: Describe each pass as a cudaKernelNodeParams: func (the kernel's address,
// @hint: cast to void*), gridDim (enough blocks for n, at most four per SM:
// @hint: course::sm_count() * 4), blockDim (kThreads), sharedMemBytes 0, and kernelParams: an
// @hint: array of pointers to the argument values, one per kernel parameter, in order, each
// @hint: pointing at a value of exactly the parameter's type. The runtime copies the values
// @hint: during the call that takes the parameters, so they need only live until it returns.
// @hint: The same description serves to add a node and, later, to change it in g.exec.
namespace {

// One pass's argument values and the node parameters that point at them.
struct StageLaunch {
  const float* in = nullptr;
  float* out = nullptr;
  std::size_t n = 0;
  float coefficient = 0.0f;
  void* arguments[4] = {};
  cudaKernelNodeParams params{};
};

// Fills `launch` with pass `stage` of the step `p` on g's state; the parameters point into
// `launch`, so it must outlive the call that reads them.
void describe_stage(int stage, const StepParams& p, const PipelineGraph& g, StageLaunch& launch) {
  launch.in = p.in;
  launch.out = p.out;
  launch.n = g.n;
  launch.params = cudaKernelNodeParams{};
  launch.params.gridDim = dim3(static_cast<unsigned>(g.blocks));
  launch.params.blockDim = dim3(kThreads);
  launch.params.kernelParams = launch.arguments;
  if (stage == 0) {
    launch.coefficient = p.coupling;
    launch.params.func = reinterpret_cast<void*>(&diffuse_kernel);
    launch.arguments[0] = &launch.in;
    launch.arguments[1] = &launch.out;
    launch.arguments[2] = &launch.n;
    launch.arguments[3] = &launch.coefficient;
    return;
  }
  // react and amplify work in place on out.
  launch.coefficient = stage == 1 ? p.rate : p.gain;
  launch.params.func = stage == 1 ? reinterpret_cast<void*>(&react_kernel)
                                  : reinterpret_cast<void*>(&amplify_kernel);
  launch.arguments[0] = &launch.out;
  launch.arguments[1] = &launch.n;
  launch.arguments[2] = &launch.coefficient;
}

}  // namespace
// @end-solution

PipelineGraph build_pipeline_graph(const StepParams& first, std::size_t n, cudaStream_t stream) {
  PipelineGraph g;
  g.n = n;
  g.blocks = static_cast<int>(std::min(std::max<std::size_t>((n + kThreads - 1) / kThreads, 1),
                                       static_cast<std::size_t>(course::sm_count()) * 4));
  // @begin-solution: Build the graph of one step with `first` explicitly:
  // @hint: cudaGraphCreate(&g.graph, 0), then one cudaGraphAddKernelNode per pass, each
  // @hint: depending on the one before (its dependencies: the previous node; none for the
  // @hint: first), keeping the nodes in g.nodes: they are how run_pipeline_step names the nodes
  // @hint: it changes. (Stream capture on a stream of your own builds the same chain, but
  // @hint: cudaGraphGetNodes promises no order: find the nodes from the root along the edges.)
  // @hint: Instantiate once, cudaGraphInstantiate(&g.exec, g.graph, 0), and
  // @hint: cudaGraphUpload(g.exec, stream), so that the first step does not pay for setting
  // @hint: the graph up on the device.
  CUDA_CHECK(cudaGraphCreate(&g.graph, 0));
  for (int stage = 0; stage < kPipelineStages; ++stage) {
    StageLaunch launch;
    describe_stage(stage, first, g, launch);
    const cudaGraphNode_t* after = stage == 0 ? nullptr : &g.nodes[stage - 1];
    CUDA_CHECK(cudaGraphAddKernelNode(&g.nodes[stage], g.graph, after, stage == 0 ? 0 : 1,
                                      &launch.params));
  }
  CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
  CUDA_CHECK(cudaGraphUpload(g.exec, stream));
  // @skeleton: (void)first; (void)stream;
  // @end-solution
  return g;
}

void run_pipeline_step(PipelineGraph& g, const StepParams& params, cudaStream_t stream) {
  // @begin-solution: Change each pass of g.exec to this step's buffers and coefficients with
  // @hint: cudaGraphExecKernelNodeSetParams(g.exec, g.nodes[stage], &node_params) (the node is
  // @hint: named by the graph's node it was instantiated from), then cudaGraphLaunch(g.exec,
  // @hint: stream). Do not wait for anything: the change reaches only later launches, so steps
  // @hint: already enqueued keep their own parameters. Never cudaGraphInstantiate here, and
  // @hint: never change the graph instead (cudaGraphKernelNodeSetParams edits g.graph, which
  // @hint: the executable graph no longer reads).
  for (int stage = 0; stage < kPipelineStages; ++stage) {
    StageLaunch launch;
    describe_stage(stage, params, g, launch);
    CUDA_CHECK(cudaGraphExecKernelNodeSetParams(g.exec, g.nodes[stage], &launch.params));
  }
  CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
  // @skeleton: (void)g; (void)params; (void)stream;
  // @end-solution
}

void destroy_pipeline_graph(PipelineGraph& g) {
  // @begin-solution: cudaGraphExecDestroy the executable graph and cudaGraphDestroy the graph
  // @hint: (each only when not nullptr), then reset the handles to nullptr. A step still in
  // @hint: flight finishes: the runtime frees the executable graph once it is done.
  if (g.exec != nullptr) CUDA_CHECK(cudaGraphExecDestroy(g.exec));
  if (g.graph != nullptr) CUDA_CHECK(cudaGraphDestroy(g.graph));
  g.exec = nullptr;
  g.graph = nullptr;
  // @skeleton: (void)g;
  // @end-solution
}
