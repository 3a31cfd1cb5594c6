#include "matmul_v1_naive.h"

#include <cstddef>

#include "course/check.h"

constexpr int kBlockX = 32;  // along columns of C: one warp covers 32 consecutive columns
constexpr int kBlockY = 8;

__global__ void matmul_v1_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
  // @begin-solution: Take the column of C from threadIdx.x (so a warp reads 32 consecutive
  // @hint: elements of B and one element of A per k: coalesced and broadcast) and the row from
  // @hint: threadIdx.y. Threads outside M x N return; the others sum A[row][k] * B[k][col]
  // @hint: over k in a register and write C once.
  const int col = blockIdx.x * kBlockX + threadIdx.x;
  const int row = blockIdx.y * kBlockY + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + static_cast<std::size_t>(row) * K;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum += a[k] * B[static_cast<std::size_t>(k) * N + col];
  C[static_cast<std::size_t>(row) * N + col] = sum;
  // @skeleton: (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;
  // @end-solution
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  // @begin-solution: Launch a 2D grid of kBlockX x kBlockY blocks covering N columns (x) and
  // @hint: M rows (y), rounded up, on `stream`; then CUDA_CHECK_LAUNCH().
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((N + kBlockX - 1) / kBlockX, (M + kBlockY - 1) / kBlockY);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)A; (void)B; (void)C; (void)K; (void)stream;
  // @end-solution
}
