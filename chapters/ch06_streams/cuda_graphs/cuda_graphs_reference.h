// CPU reference for cuda_graphs (course code, for the tests and the benchmark).
#pragma once

#include <vector>

// `input` after `replays` replays of the chain: steps 0, 1, ..., steps - 1 applied in order with
// step_update, `replays` times over.
std::vector<float> step_chain_reference(std::vector<float> input, int steps, int replays = 1);
