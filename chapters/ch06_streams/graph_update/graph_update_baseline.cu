#include "graph_update_baseline.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;

__global__ void course_diffuse_kernel(const float* __restrict__ in, float* __restrict__ out,
                                      std::size_t n, float coupling) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    out[i] = diffuse(in[i == 0 ? 0 : i - 1], in[i], in[i + 1 == n ? i : i + 1], coupling);
}

__global__ void course_react_kernel(float* __restrict__ data, std::size_t n, float rate) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = react(data[i], rate);
}

__global__ void course_amplify_kernel(float* __restrict__ data, std::size_t n, float gain) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = amplify(data[i], gain);
}

// A graph destroyed when it goes out of scope, thrown through or not.
class ScopedGraph {
 public:
  ScopedGraph() { CUDA_CHECK(cudaGraphCreate(&graph_, 0)); }
  ~ScopedGraph() { cudaGraphDestroy(graph_); }
  ScopedGraph(const ScopedGraph&) = delete;
  ScopedGraph& operator=(const ScopedGraph&) = delete;
  cudaGraph_t get() const { return graph_; }

 private:
  cudaGraph_t graph_ = nullptr;
};

// Adds the step's three kernel nodes to `graph`, in a chain, as the solution builds them.
void add_step_nodes(cudaGraph_t graph, const StepParams& p, std::size_t n) {
  const std::size_t needed = std::max<std::size_t>((n + kThreads - 1) / kThreads, 1);
  const unsigned blocks = static_cast<unsigned>(
      std::min(needed, static_cast<std::size_t>(course::sm_count()) * kBlocksPerSm));
  const float* in = p.in;
  float* out = p.out;
  std::size_t count = n;
  float coupling = p.coupling, rate = p.rate, gain = p.gain;
  void* diffuse_arguments[] = {&in, &out, &count, &coupling};
  void* react_arguments[] = {&out, &count, &rate};
  void* amplify_arguments[] = {&out, &count, &gain};
  const struct {
    void* func;
    void** arguments;
  } stages[] = {{reinterpret_cast<void*>(&course_diffuse_kernel), diffuse_arguments},
                {reinterpret_cast<void*>(&course_react_kernel), react_arguments},
                {reinterpret_cast<void*>(&course_amplify_kernel), amplify_arguments}};
  cudaGraphNode_t previous = nullptr;
  for (const auto& stage : stages) {
    cudaKernelNodeParams node{};
    node.func = stage.func;
    node.gridDim = dim3(blocks);
    node.blockDim = dim3(kThreads);
    node.kernelParams = stage.arguments;
    cudaGraphNode_t added = nullptr;
    CUDA_CHECK(cudaGraphAddKernelNode(&added, graph, previous == nullptr ? nullptr : &previous,
                                      previous == nullptr ? 0 : 1, &node));
    previous = added;
  }
}

}  // namespace

void pipeline_step_reinstantiated(const StepParams& params, std::size_t n, cudaStream_t stream) {
  ScopedGraph graph;
  add_step_nodes(graph.get(), params, n);
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph.get(), 0));
  const cudaError_t launched = cudaGraphLaunch(exec, stream);
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(launched);
}

CourseUpdatedGraph course_updated_graph(const StepParams& first, std::size_t n,
                                        cudaStream_t stream) {
  CourseUpdatedGraph g;
  g.n = n;
  ScopedGraph graph;
  add_step_nodes(graph.get(), first, n);
  CUDA_CHECK(cudaGraphInstantiate(&g.exec, graph.get(), 0));
  CUDA_CHECK(cudaGraphUpload(g.exec, stream));
  return g;
}

void course_updated_graph_step(CourseUpdatedGraph& g, const StepParams& params,
                               cudaStream_t stream) {
  ScopedGraph graph;
  add_step_nodes(graph.get(), params, g.n);
  cudaGraphExecUpdateResultInfo result{};
  CUDA_CHECK(cudaGraphExecUpdate(g.exec, graph.get(), &result));
  CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
}

void course_updated_graph_destroy(CourseUpdatedGraph& g) {
  if (g.exec != nullptr) CUDA_CHECK(cudaGraphExecDestroy(g.exec));
  g.exec = nullptr;
}
