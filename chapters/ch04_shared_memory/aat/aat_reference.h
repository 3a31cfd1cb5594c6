#pragma once

#include <vector>

// C[i][j] = sum_l A[i][l] * A[j][l] for a row-major m x k A, accumulated in double.
std::vector<float> aat_reference(const std::vector<float>& a, int m, int k);
