// Course-owned code the programmatic_launch benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// The same chain as run_step_chain, issued the ordinary way: `steps` launches (<<<...>>>) of
// the course's own copy of the step kernel on `stream`, with the launch shape the header gives
// (kStepThreads threads, step_blocks(n, SM count) blocks), each starting only once the one
// before has ended. Returns without waiting.
void step_chain_plain_launches(float* data, std::size_t n, int steps, cudaStream_t stream);
