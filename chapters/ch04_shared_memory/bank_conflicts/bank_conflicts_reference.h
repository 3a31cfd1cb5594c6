#pragma once

#include <vector>

// For each of `tiles` row-major 32 x cols tiles T: G[i][j] = sum_k T[i][k] * T[j][k], accumulated in double and rounded once.
std::vector<float> bank_conflicts_reference(const std::vector<float>& in, int tiles, int cols);
