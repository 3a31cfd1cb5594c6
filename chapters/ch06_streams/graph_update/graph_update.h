// Exercise ch06 / graph_update: a graph of one time step, built and instantiated once, then
// updated in place before every step, since every step reads and writes other buffers with
// other coefficients.
//
// Frozen API: the tests and the benchmark call exactly this.
//
// The work: a state of n floats advances one step at a time. A step reads `in` and writes
// `out` (different buffers: the caller swaps them every step, ping-pong) in three passes, each
// after the previous one has finished:
//   1. diffuse: out[i] = diffuse(in[i - 1], in[i], in[i + 1], coupling), with in[-1] read as
//      in[0] and in[n] as in[n - 1]
//   2. react:   out[i] = react(out[i], rate)
//   3. amplify: out[i] = amplify(out[i], gain)
// On a small state each pass takes the GPU a few microseconds, less than instantiating a graph
// takes the host; so the step is a graph of three kernel nodes, instantiated once and changed
// in place, not rebuilt for every new set of parameters.
//
//   build_pipeline_graph(first, n, stream)
//       builds the graph of one step with `first`: exactly kPipelineStages kernel nodes, one
//       per pass, in a chain (diffuse, then react, then amplify), by adding the nodes
//       explicitly or by stream capture on a stream of your own; instantiates it once and
//       keeps both in the PipelineGraph it returns; may upload the executable graph on
//       `stream` (cudaGraphUpload). It runs nothing: first.out is unchanged until a step runs.
//       It returns without waiting for `stream` (or the device). 1 <= n < 2^31.
//   run_pipeline_step(g, params, stream)
//       one step with `params` (any two buffers of g.n floats, any coefficients): changes
//       g.exec in place so that its nodes do this step (cudaGraphExecKernelNodeSetParams on
//       each node, or cudaGraphExecUpdate from a graph of the same shape), then launches it on
//       `stream` (cudaGraphLaunch) behind the work already there, and returns without waiting.
//       Earlier steps may still be pending or running on the GPU: they keep the parameters
//       they were launched with. g.exec stays the executable graph that build_pipeline_graph
//       made, never instantiated again nor replaced, and after the call, launched on its own,
//       it does this step again. Several PipelineGraphs may exist at once.
//   destroy_pipeline_graph(g)
//       destroys the executable graph and the graph and sets both handles to nullptr; may be
//       called while a step is still in flight, and again on a destroyed PipelineGraph.
//
// The tests read graph (its nodes, their types and edges) and exec, and launch exec
// themselves; the other fields are yours, recorded by build_pipeline_graph for
// run_pipeline_step.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

inline constexpr int kPipelineStages = 3;

// What one step reads, writes and computes with. The tests and the benchmark keep
// 0 <= coupling <= 0.5, 1 <= rate <= 2 and 0 < gain <= 1, where every pass maps [-1, 1] into
// itself, so any number of steps stays finite.
struct StepParams {
  const float* in = nullptr;  // the state the step reads: n floats on the device
  float* out = nullptr;       // where it writes the next state: n floats, apart from in
  float coupling = 0.0f;      // diffuse's weight of the neighbours
  float rate = 0.0f;          // react's rate
  float gain = 0.0f;          // amplify's factor
};

struct PipelineGraph {
  cudaGraph_t graph = nullptr;     // the graph of one step, built once, kept for inspection
  cudaGraphExec_t exec = nullptr;  // its one instantiation, updated in place before each step
  // Yours, recorded by build_pipeline_graph for run_pipeline_step:
  cudaGraphNode_t nodes[kPipelineStages] = {};  // e.g. the kernel nodes, in pass order
  std::size_t n = 0;
  int blocks = 0;
};

// The three passes on one element. Each rounds exactly as written (the products inside fmaf
// once, each fmaf once) on the host and the device alike, so the tests compare exactly.
__host__ __device__ inline float diffuse(float left, float middle, float right, float coupling) {
  return fmaf(coupling, fmaf(-2.0f, middle, left + right), middle);
}
__host__ __device__ inline float react(float x, float rate) { return fmaf(x * rate, -x, 1.0f); }
__host__ __device__ inline float amplify(float x, float gain) { return x * gain; }

PipelineGraph build_pipeline_graph(const StepParams& first, std::size_t n, cudaStream_t stream);
void run_pipeline_step(PipelineGraph& g, const StepParams& params, cudaStream_t stream);
void destroy_pipeline_graph(PipelineGraph& g);
