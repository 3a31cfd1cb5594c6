#include "aat_reference.h"

#include <cstddef>

std::vector<float> aat_reference(const std::vector<float>& a, int m, int k) {
  std::vector<float> c(static_cast<std::size_t>(m) * m);
  // C is symmetric: compute the upper triangle and mirror it.
  for (int i = 0; i < m; ++i)
    for (int j = i; j < m; ++j) {
      const float* ai = a.data() + static_cast<std::size_t>(i) * k;
      const float* aj = a.data() + static_cast<std::size_t>(j) * k;
      double sum = 0.0;
      for (int l = 0; l < k; ++l) sum += static_cast<double>(ai[l]) * aj[l];
      c[static_cast<std::size_t>(i) * m + j] = static_cast<float>(sum);
      c[static_cast<std::size_t>(j) * m + i] = static_cast<float>(sum);
    }
  return c;
}
