#include "transpose_shared_reference.h"

#include <cstddef>

std::vector<float> transpose_shared_reference(const std::vector<float>& in, int rows, int cols) {
  std::vector<float> out(static_cast<std::size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      out[static_cast<std::size_t>(c) * rows + r] = in[static_cast<std::size_t>(r) * cols + c];
  return out;
}
