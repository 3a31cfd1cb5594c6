#include "pitched_2d_reference.h"

#include <algorithm>
#include <cstddef>

#include "course/parallel.h"

std::vector<float> mirror_sum_reference(const std::vector<float>& in, int width, int height) {
  std::vector<float> out(in.size());
  // The cores share the rows (a benchmark's image is 8192 rows of 8100).
  const auto min_rows = static_cast<std::size_t>(std::max(1, (1 << 18) / std::max(width, 1)));
  course::parallel_chunks(static_cast<std::size_t>(std::max(height, 0)), min_rows,
                          [&](std::size_t, std::size_t first, std::size_t last) {
    for (int r = static_cast<int>(first); r < static_cast<int>(last); ++r)
      for (int c = 0; c < width; ++c)
        out[static_cast<std::size_t>(r) * width + c] =
            in[static_cast<std::size_t>(r) * width + (width - 1 - c)] +
            in[static_cast<std::size_t>(height - 1 - r) * width + c];
  });
  return out;
}
