#include "pitched_2d_reference.h"

#include <cstddef>

std::vector<float> mirror_sum_reference(const std::vector<float>& in, int width, int height) {
  std::vector<float> out(in.size());
  for (int r = 0; r < height; ++r)
    for (int c = 0; c < width; ++c)
      out[static_cast<std::size_t>(r) * width + c] =
          in[static_cast<std::size_t>(r) * width + (width - 1 - c)] +
          in[static_cast<std::size_t>(height - 1 - r) * width + c];
  return out;
}
