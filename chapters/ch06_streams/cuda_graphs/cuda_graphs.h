// Exercise ch06 / cuda_graphs: many tiny dependent kernels recorded once into a CUDA graph,
// instantiated once, then replayed with one launch each time.
//
// Frozen API: the tests and the benchmark call exactly this.
//
// The work: `steps` passes over data[0, n), pass s (0 <= s < steps) replacing every element x
// with step_update(x, s), each pass after the previous one has finished. On a small array a
// pass takes the GPU less time than launching it takes, so issued as plain launches the
// sequence costs what the launches cost; a graph hands the GPU the whole chain at once.
//
//   build_step_graph(data, n, steps, stream)
//       records one kernel launch per step into a graph, in step order, each kernel node
//       depending on the one before (a chain of exactly `steps` kernel nodes and no other
//       node), either by stream capture on a stream of your own or by adding the nodes
//       explicitly; instantiates it once; may upload the executable graph on `stream`
//       (cudaGraphUpload: it prepares the graph on the device and runs none of its kernels).
//       It runs nothing: data is unchanged until the first replay. It returns without waiting
//       for `stream` (or the device). data is a device pointer to n floats that outlives the
//       graph; 1 <= n < 2^31, 1 <= steps <= 4096.
//   launch_step_graph(g, stream)
//       one replay: enqueues the whole chain on `stream` as one operation (after the work
//       already on it, before what comes after), reading data as it is when the replay runs,
//       so a caller may rewrite data between replays; returns without waiting. Called any
//       number of times; several StepGraphs may exist at once, each replaying its own chain.
//   destroy_step_graph(g)
//       destroys the executable graph and the graph and sets both handles to nullptr; may be
//       called while a replay is still in flight, and again on a destroyed StepGraph.
//
// The tests read graph (its nodes, their types and edges) and exec; the other fields are
// yours, recorded by build_step_graph for your own use.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

struct StepGraph {
  cudaGraph_t graph = nullptr;     // the recorded chain, kept for inspection
  cudaGraphExec_t exec = nullptr;  // its instantiation, what a replay launches
  float* data = nullptr;           // what the graph was built for
  std::size_t n = 0;
  int steps = 0;
};

// One step, for |x| <= 1: x -> 1 - r x^2 with r = 1.875 + (step % 16) / 128, which maps
// [-1, 1] into itself, so any number of steps stays finite; the map is chaotic, so the result
// of 256 steps still depends on the input, and different steps do not commute, so a chain run
// out of order gives other values. x * r is rounded once and fmaf once, on the host and the
// device alike: the tests compare exactly.
__host__ __device__ inline float step_update(float x, int step) {
  const float rate = 1.875f + 0.0078125f * static_cast<float>(step % 16);
  return fmaf(x * rate, -x, 1.0f);
}

StepGraph build_step_graph(float* data, std::size_t n, int steps, cudaStream_t stream);
void launch_step_graph(const StepGraph& g, cudaStream_t stream);
void destroy_step_graph(StepGraph& g);
