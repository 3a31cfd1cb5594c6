// CPU reference for programmatic_launch (course code, for the tests and the benchmark).
#pragma once

#include <vector>

// Step `step`'s kStepCoefficients coefficients (step_coefficient), derived once per process
// and kept: every case and every call asks for the same steps again.
const std::vector<float>& step_coefficients(int step);

// `input` after steps 0, 1, ..., steps - 1 applied in order with apply_step; with `calls`,
// that whole chain `calls` times over (run_step_chain called again on the same data).
std::vector<float> step_chain_reference(std::vector<float> input, int steps, int calls = 1);
