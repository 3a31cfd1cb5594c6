#pragma once

#include <cstddef>
#include <vector>

// out[i] = sum over d = -4..4 of c[d + 4] * x[i + d], where x = in[first, first + n) and x is 0
// outside it; accumulated in float from d = -4 up to 4 with one fused multiply-add per term,
// the order the header states, so a kernel that follows it matches bit for bit.
std::vector<float> stencil_constant_reference(const std::vector<float>& in, std::size_t first,
                                              std::size_t n, const std::vector<float>& c);
