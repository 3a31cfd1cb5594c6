#include "transpose_shared_reference.h"

#include <algorithm>
#include <cstddef>

#include "course/parallel.h"

std::vector<float> transpose_shared_reference(const std::vector<float>& in, int rows, int cols) {
  std::vector<float> out(static_cast<std::size_t>(rows) * cols);
  // The cores share the output's rows (a benchmark's matrix is 2^26 elements), each range
  // copied in 32x32 tiles so that the strided side reuses its cache lines.
  constexpr int kTile = 32;
  const auto min_columns = static_cast<std::size_t>(std::max(1, (1 << 18) / std::max(rows, 1)));
  course::parallel_chunks(static_cast<std::size_t>(std::max(cols, 0)), min_columns,
                          [&](std::size_t, std::size_t first, std::size_t last) {
    for (int c0 = static_cast<int>(first); c0 < static_cast<int>(last); c0 += kTile) {
      const int c1 = std::min(c0 + kTile, static_cast<int>(last));
      for (int r0 = 0; r0 < rows; r0 += kTile) {
        const int r1 = std::min(r0 + kTile, rows);
        for (int c = c0; c < c1; ++c)
          for (int r = r0; r < r1; ++r)
            out[static_cast<std::size_t>(c) * rows + r] =
                in[static_cast<std::size_t>(r) * cols + c];
      }
    }
  });
  return out;
}
