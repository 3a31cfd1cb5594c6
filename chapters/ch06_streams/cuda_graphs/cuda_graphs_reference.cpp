#include "cuda_graphs_reference.h"

#include "cuda_graphs.h"

std::vector<float> step_chain_reference(std::vector<float> input, int steps, int replays) {
  for (int replay = 0; replay < replays; ++replay)
    for (int step = 0; step < steps; ++step)
      for (float& x : input) x = step_update(x, step);
  return input;
}
