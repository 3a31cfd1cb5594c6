#include "bank_conflicts_reference.h"

#include <cstddef>

std::vector<float> bank_conflicts_reference(const std::vector<float>& in, int tiles, int cols) {
  constexpr int kRows = 32;
  std::vector<float> out(static_cast<std::size_t>(tiles) * kRows * kRows);
  for (int b = 0; b < tiles; ++b) {
    const float* t = in.data() + static_cast<std::size_t>(b) * kRows * cols;
    float* g = out.data() + static_cast<std::size_t>(b) * kRows * kRows;
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < kRows; ++j) {
        double sum = 0.0;
        for (int k = 0; k < cols; ++k)
          sum += static_cast<double>(t[i * cols + k]) * t[j * cols + k];
        g[i * kRows + j] = static_cast<float>(sum);
      }
  }
  return out;
}
