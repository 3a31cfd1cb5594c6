#pragma once

#include <vector>

// out[c * rows + r] = in[r * cols + c]
std::vector<float> transpose_shared_reference(const std::vector<float>& in, int rows, int cols);
