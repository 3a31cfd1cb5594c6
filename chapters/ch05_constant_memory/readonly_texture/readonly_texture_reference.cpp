#include "readonly_texture_reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "course/parallel.h"

std::vector<float> readonly_gather_reference(const std::vector<float>& src,
                                             const std::vector<int>& indices) {
  std::vector<float> out(indices.size());
  // The cores share the elements (a benchmark gathers 2^26 of them).
  course::parallel_chunks(indices.size(), 1 << 18, [&](std::size_t, std::size_t begin,
                                                       std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = src[static_cast<std::size_t>(indices[i])];
  });
  return out;
}

namespace {

// A texel index the filter asked for, mapped into [0, size) as the address mode says.
int address_texel(long long i, int size, ResampleAddress address) {
  if (address == ResampleAddress::kWrap) return static_cast<int>(((i % size) + size) % size);
  return static_cast<int>(i < 0 ? 0 : (i >= size ? size - 1 : i));
}

// One dimension of the filter: the two texels and the weight of the second.
struct Taps {
  int first;
  int second;
  double weight;  // of `second`; `first` gets 1 - weight
};

// Output coordinate `o` of `out_size` sampling an axis of `size` texels.
Taps taps(int o, int out_size, int size, ResampleAddress address) {
  // The normalised coordinate exactly as the kernel computes it, in float.
  const float normalised = (static_cast<float>(o) + 0.5f) / static_cast<float>(out_size);
  const double shifted = static_cast<double>(normalised) * size - 0.5;
  const double below = std::floor(shifted);
  // 8 fractional bits: a multiple of 1/256 in [0, 1]; 1 itself is representable in 9 bits.
  const double weight = std::round((shifted - below) * 256.0) / 256.0;
  const auto i = static_cast<long long>(below);
  return {address_texel(i, size, address), address_texel(i + 1, size, address), weight};
}

}  // namespace

std::vector<float> texture_resample_reference(const std::vector<float>& image, int width,
                                              int height, int out_width, int out_height,
                                              ResampleAddress address) {
  std::vector<float> out(static_cast<std::size_t>(out_width) * out_height);
  std::vector<Taps> columns(static_cast<std::size_t>(out_width));
  for (int x = 0; x < out_width; ++x) columns[x] = taps(x, out_width, width, address);
  // The cores share the output's rows (a benchmark's output is 7680 x 4320).
  const auto min_rows = static_cast<std::size_t>(std::max(1, (1 << 18) / std::max(out_width, 1)));
  course::parallel_chunks(static_cast<std::size_t>(std::max(out_height, 0)), min_rows,
                          [&](std::size_t, std::size_t first, std::size_t last) {
    for (int y = static_cast<int>(first); y < static_cast<int>(last); ++y) {
      const Taps rows = taps(y, out_height, height, address);
      const float* top = image.data() + static_cast<std::size_t>(rows.first) * width;
      const float* bottom = image.data() + static_cast<std::size_t>(rows.second) * width;
      for (int x = 0; x < out_width; ++x) {
        const Taps& c = columns[x];
        const double upper = (1.0 - c.weight) * top[c.first] + c.weight * top[c.second];
        const double lower = (1.0 - c.weight) * bottom[c.first] + c.weight * bottom[c.second];
        out[static_cast<std::size_t>(y) * out_width + x] =
            static_cast<float>((1.0 - rows.weight) * upper + rows.weight * lower);
      }
    }
  });
  return out;
}
