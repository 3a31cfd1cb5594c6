#pragma once

#include <vector>

// C = A B with double-precision accumulation, rounded to float once at the end.
std::vector<float> matmul_v1_naive_reference(const std::vector<float>& A, const std::vector<float>& B,
                                    int M, int N, int K);
// One element of C in double precision: for spot checks of big products.
double matmul_v1_naive_reference_at(const std::vector<float>& A, const std::vector<float>& B, int N,
                           int K, int i, int j);
