// Course-owned code the cuda_graphs benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// The same chain as a replay of build_step_graph's graph, issued the ordinary way: `steps`
// launches of the course's own copy of the step kernel on `stream`, one after another, with
// the solution's launch shape. Returns without waiting.
void step_chain_plain_launches(float* data, std::size_t n, int steps, cudaStream_t stream);
