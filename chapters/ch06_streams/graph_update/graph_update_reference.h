// CPU reference for graph_update (course code, for the tests and the benchmark).
#pragma once

#include <vector>

// The coefficients of one step (StepParams without its buffers).
struct StepCoefficients {
  float coupling = 0.0f;
  float rate = 0.0f;
  float gain = 0.0f;
};

// The state after one step from `in`: diffuse, react and amplify, as graph_update.h defines them.
std::vector<float> pipeline_step_reference(const std::vector<float>& in,
                                           const StepCoefficients& step);

// The states after each of `steps`, in order, from `initial`: element k is the state after
// steps[0..k].
std::vector<std::vector<float>> pipeline_states_reference(
    const std::vector<float>& initial, const std::vector<StepCoefficients>& steps);
