#include "stencil_constant_reference.h"

#include <cmath>

#include "stencil_constant.h"

std::vector<float> stencil_constant_reference(const std::vector<float>& in, std::size_t first,
                                              std::size_t n, const std::vector<float>& c) {
  constexpr int kR = kStencilConstantRadius;
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    float sum = 0.0f;
    for (int d = -kR; d <= kR; ++d) {
      const long long j = static_cast<long long>(i) + d;
      const bool inside = j >= 0 && j < static_cast<long long>(n);
      // A zero term still goes through the fma, as in a kernel reading a zero-padded tile.
      sum = std::fma(c[d + kR], inside ? in[first + j] : 0.0f, sum);
    }
    out[i] = sum;
  }
  return out;
}
