#include "programmatic_launch_reference.h"

#include <cstddef>
#include <deque>
#include <mutex>

#include "course/parallel.h"
#include "programmatic_launch.h"

const std::vector<float>& step_coefficients(int step) {
  // Grown in whole batches of steps, each step's table derived on its own thread; a deque,
  // so that growing it leaves the tables already handed out where they are.
  static std::mutex guard;
  static std::deque<std::vector<float>> tables;
  std::lock_guard<std::mutex> lock(guard);
  const auto wanted = static_cast<std::size_t>(step) + 1;
  if (tables.size() < wanted) {
    const std::size_t first = tables.size();
    tables.resize(wanted);
    course::parallel_chunks(wanted - first, 1, [&](std::size_t, std::size_t begin,
                                                   std::size_t end) {
      for (std::size_t s = first + begin; s < first + end; ++s) {
        tables[s].resize(kStepCoefficients);
        for (int k = 0; k < kStepCoefficients; ++k)
          tables[s][k] = step_coefficient(static_cast<int>(s), k);
      }
    });
  }
  return tables[static_cast<std::size_t>(step)];
}

std::vector<float> step_chain_reference(std::vector<float> input, int steps, int calls) {
  if (steps > 0) step_coefficients(steps - 1);  // every missing table at once, in parallel
  std::vector<const float*> tables;
  for (int step = 0; step < steps; ++step) tables.push_back(step_coefficients(step).data());
  course::parallel_chunks(input.size(), 256, [&](std::size_t, std::size_t begin,
                                                 std::size_t end) {
    for (int call = 0; call < calls; ++call)
      for (const float* coefficients : tables)
        for (std::size_t i = begin; i < end; ++i) input[i] = apply_step(input[i], coefficients);
  });
  return input;
}
