#include "bank_conflicts_reference.h"

#include <cstddef>

#include "course/parallel.h"

std::vector<float> bank_conflicts_reference(const std::vector<float>& in, int tiles, int cols) {
  constexpr int kRows = 32;
  std::vector<float> out(static_cast<std::size_t>(tiles) * kRows * kRows);
  // The cores share the tiles (65,537 of them in a large case, each 32 x 32 x cols products).
  course::parallel_chunks(static_cast<std::size_t>(tiles), 64,
                          [&](std::size_t, std::size_t first, std::size_t end) {
    for (std::size_t b = first; b < end; ++b) {
      const float* t = in.data() + b * kRows * cols;
      float* g = out.data() + b * kRows * kRows;
      for (int i = 0; i < kRows; ++i)
        for (int j = 0; j < kRows; ++j) {
          double sum = 0.0;
          for (int k = 0; k < cols; ++k)
            sum += static_cast<double>(t[i * cols + k]) * t[j * cols + k];
          g[i * kRows + j] = static_cast<float>(sum);
        }
    }
  });
  return out;
}
