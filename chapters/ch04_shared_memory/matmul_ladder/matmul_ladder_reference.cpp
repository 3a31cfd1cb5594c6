// Definitions of the CPU reference declared in matmul_ladder.h, compiled once per build.
#include <cstddef>

#include "course/parallel.h"
#include "matmul_ladder.h"

std::vector<float> matmul_ladder_reference(const std::vector<float>& A, const std::vector<float>& B,
                                           int M, int N, int K) {
  std::vector<float> C(static_cast<std::size_t>(M) * N);
  // The cores share the rows (a large case is a billion products); each row's sums are the
  // same however the rows are shared.
  course::parallel_chunks(static_cast<std::size_t>(M), 16,
                          [&](std::size_t, std::size_t first, std::size_t end) {
    std::vector<double> row(N);
    for (std::size_t i = first; i < end; ++i) {
      // i-k-j order walks B and the accumulator row contiguously.
      for (int j = 0; j < N; ++j) row[j] = 0.0;
      for (int k = 0; k < K; ++k) {
        const double a = A[i * K + k];
        const float* b = &B[static_cast<std::size_t>(k) * N];
        for (int j = 0; j < N; ++j) row[j] += a * b[j];
      }
      for (int j = 0; j < N; ++j) C[i * N + j] = static_cast<float>(row[j]);
    }
  });
  return C;
}

double matmul_ladder_reference_at(const std::vector<float>& A, const std::vector<float>& B, int N,
                                  int K, int i, int j) {
  double sum = 0.0;
  for (int k = 0; k < K; ++k)
    sum += static_cast<double>(A[static_cast<std::size_t>(i) * K + k]) *
           B[static_cast<std::size_t>(k) * N + j];
  return sum;
}
