#include "register_spilling_reference.h"

#include <algorithm>
#include <array>
#include <cstddef>

#include "course/parallel.h"
#include "register_spilling.h"

std::vector<float> register_spilling_reference(const std::vector<float>& in, int rows, int cols) {
  std::vector<float> out(static_cast<std::size_t>(rows) * cols);
  // The cores share the rows (a benchmark's image is tens of millions of windows).
  course::parallel_chunks(static_cast<std::size_t>(rows), 16, [&](std::size_t, std::size_t first,
                                                                  std::size_t last) {
    std::array<float, kMedianWindow> window;
    for (int r = static_cast<int>(first); r < static_cast<int>(last); ++r) {
      for (int c = 0; c < cols; ++c) {
        int k = 0;
        for (int dr = -kMedianRadius; dr <= kMedianRadius; ++dr) {
          const std::size_t y = static_cast<std::size_t>(std::clamp(r + dr, 0, rows - 1));
          for (int dc = -kMedianRadius; dc <= kMedianRadius; ++dc)
            window[k++] = in[y * cols + static_cast<std::size_t>(std::clamp(c + dc, 0, cols - 1))];
        }
        // No NaN in the input, so operator< is a strict weak order and the median is well
        // defined.
        const auto middle = window.begin() + kMedianWindow / 2;
        std::nth_element(window.begin(), middle, window.end());
        out[static_cast<std::size_t>(r) * cols + c] = *middle;
      }
    }
  });
  return out;
}
