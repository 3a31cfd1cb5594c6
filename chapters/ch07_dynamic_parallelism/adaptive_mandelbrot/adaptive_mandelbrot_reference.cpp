#include "adaptive_mandelbrot_reference.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "course/parallel.h"

namespace {

// The algorithm over any source of pixel dwells: dwell_of(px, py) gives pixel_dwell's value.
template <class DwellOf>
class Subdivision {
 public:
  Subdivision(std::vector<int>& image, int width, const MandelbrotParams& params,
              DwellOf dwell_of)
      : image_(image), width_(width), params_(params), dwell_of_(dwell_of) {}

  // Step 2 of the algorithm for region (x, y, w, h) of side `side` at depth `depth`.
  void region(int x, int y, int w, int h, int side, int depth) {
    const int common = border_dwell(x, y, w, h);
    if (common >= 0) {
      for (int py = y; py < y + h; ++py)
        for (int px = x; px < x + w; ++px) at(px, py) = common;
      return;
    }
    const int k = params_.subdivisions;
    const int child_side = (side + k - 1) / k;
    if (depth + 1 < params_.max_depth && child_side >= params_.min_size) {
      for (int b = 0; b < k; ++b)
        for (int a = 0; a < k; ++a) {
          const int child_x = x + a * child_side;
          const int child_y = y + b * child_side;
          if (child_x >= x + w || child_y >= y + h) continue;
          region(child_x, child_y, std::min(child_side, x + w - child_x),
                 std::min(child_side, y + h - child_y), child_side, depth + 1);
        }
      return;
    }
    for (int py = y; py < y + h; ++py)
      for (int px = x; px < x + w; ++px) at(px, py) = dwell_of_(px, py);
  }

 private:
  int& at(int px, int py) { return image_[static_cast<std::size_t>(py) * width_ + px]; }

  // The dwell every pixel of the region's outer ring has, or -1 when two of them differ.
  int border_dwell(int x, int y, int w, int h) {
    const int first = dwell_of_(x, y);
    for (int py = y; py < y + h; ++py) {
      const bool whole_row = py == y || py == y + h - 1;
      const int step = whole_row ? 1 : std::max(w - 1, 1);
      for (int px = x; px < x + w; px += step)
        if (dwell_of_(px, py) != first) return -1;
    }
    return first;
  }

  std::vector<int>& image_;
  int width_;
  const MandelbrotParams& params_;
  DwellOf dwell_of_;
};

template <class DwellOf>
std::vector<int> subdivide(int width, int height, const MandelbrotParams& params,
                           DwellOf dwell_of) {
  std::vector<int> image(static_cast<std::size_t>(width) * height);
  const int side = params.initial_size;
  std::vector<std::pair<int, int>> corners;
  for (int y = 0; y < height; y += side)
    for (int x = 0; x < width; x += side) corners.emplace_back(x, y);
  // The cores share the initial regions, which write disjoint pixels.
  course::parallel_chunks(corners.size(), 4, [&](std::size_t, std::size_t first, std::size_t end) {
    Subdivision<DwellOf> subdivision(image, width, params, dwell_of);
    for (std::size_t c = first; c < end; ++c) {
      const auto [x, y] = corners[c];
      subdivision.region(x, y, std::min(side, width - x), std::min(side, height - y), side, 0);
    }
  });
  return image;
}

}  // namespace

std::vector<int> mandelbrot_reference(int width, int height, const MandelbrotView& view,
                                      const MandelbrotParams& params) {
  return subdivide(width, height, params, [&](int px, int py) {
    return pixel_dwell(px, py, view, params.max_dwell);
  });
}

std::vector<int> mandelbrot_reference_from_pixels(const std::vector<int>& pixel_dwells,
                                                  int width, int height,
                                                  const MandelbrotParams& params) {
  return subdivide(width, height, params, [&](int px, int py) {
    return pixel_dwells[static_cast<std::size_t>(py) * width + px];
  });
}

std::vector<int> mandelbrot_flat_reference(int width, int height, const MandelbrotView& view,
                                           int max_dwell) {
  std::vector<int> dwells(static_cast<std::size_t>(width) * height);
  course::parallel_chunks(static_cast<std::size_t>(height), 16,
                          [&](std::size_t, std::size_t first, std::size_t end) {
    for (int py = static_cast<int>(first); py < static_cast<int>(end); ++py)
      for (int px = 0; px < width; ++px)
        dwells[static_cast<std::size_t>(py) * width + px] = pixel_dwell(px, py, view, max_dwell);
  });
  return dwells;
}
