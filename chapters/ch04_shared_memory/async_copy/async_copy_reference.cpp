#include "async_copy_reference.h"

// The stencil over in[first, first + n), which is the whole input the launcher sees.
std::vector<float> async_copy_reference(const std::vector<float>& in, std::size_t first,
                                        std::size_t n) {
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int d = -4; d <= 4; ++d) {
      const long long j = static_cast<long long>(i) + d;
      if (j < 0 || j >= static_cast<long long>(n)) continue;
      sum += (5 - (d < 0 ? -d : d)) * static_cast<double>(in[first + j]);
    }
    out[i] = static_cast<float>(sum / 25.0);
  }
  return out;
}
