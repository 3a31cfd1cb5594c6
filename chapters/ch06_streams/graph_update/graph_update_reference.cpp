#include "graph_update_reference.h"

#include <cstddef>

#include "graph_update.h"

std::vector<float> pipeline_step_reference(const std::vector<float>& in,
                                           const StepCoefficients& step) {
  const std::size_t n = in.size();
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float left = in[i == 0 ? 0 : i - 1];
    const float right = in[i + 1 == n ? i : i + 1];
    const float diffused = diffuse(left, in[i], right, step.coupling);
    out[i] = amplify(react(diffused, step.rate), step.gain);
  }
  return out;
}

std::vector<std::vector<float>> pipeline_states_reference(
    const std::vector<float>& initial, const std::vector<StepCoefficients>& steps) {
  std::vector<std::vector<float>> states;
  states.reserve(steps.size());
  const std::vector<float>* previous = &initial;
  for (const StepCoefficients& step : steps) {
    states.push_back(pipeline_step_reference(*previous, step));
    previous = &states.back();
  }
  return states;
}
