#include "vector_add_reference.h"

std::vector<float> vector_add_reference(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
  return c;
}
