#include "bank_conflicts_baseline.h"

#include <cstddef>

#include "bank_conflicts.h"
#include "course/check.h"

namespace {

constexpr int kRows = kBankTileRows;
constexpr int kBlockRows = 8;  // 32 x 8 threads, four rows of G per thread

// One block per tile. The tile is stored unpadded: row j starts at word j * kCols, a multiple
// of 32, so T[j][k] for j = 0..31 (one warp) all lie in bank k % 32: a 32-way conflict on
// every read in the inner loop. T[i][k] is the same word for the whole warp: a broadcast.
template <int kCols>
__global__ void gram_conflicted_kernel(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[kRows][kCols];
  const float* src = in + static_cast<std::size_t>(blockIdx.x) * kRows * kCols;
  for (int r = threadIdx.y; r < kRows; r += kBlockRows)
    for (int c = threadIdx.x; c < kCols; c += 32) tile[r][c] = src[r * kCols + c];
  __syncthreads();

  const int j = threadIdx.x;
  float acc[kRows / kBlockRows] = {};
  // One k per iteration keeps every read of T[j][k] a 4-byte load, so each one is the full
  // 32-way conflict. (Unrolled, the compiler may merge four of them into one 16-byte load,
  // which the hardware serves in quarter-warp phases: the conflict shrinks to 8-way per
  // phase, and the lesson blurs.)
#pragma unroll 1
  for (int k = 0; k < kCols; ++k) {
    const float tj = tile[j][k];
#pragma unroll
    for (int m = 0; m < kRows / kBlockRows; ++m)
      acc[m] += tile[threadIdx.y + m * kBlockRows][k] * tj;
  }
  float* dst = out + static_cast<std::size_t>(blockIdx.x) * kRows * kRows;
#pragma unroll
  for (int m = 0; m < kRows / kBlockRows; ++m)
    dst[(threadIdx.y + m * kBlockRows) * kRows + j] = acc[m];
}

}  // namespace

void bank_conflicts_square_conflicted(const float* in, float* out, int tiles,
                                      cudaStream_t stream) {
  if (tiles <= 0) return;
  gram_conflicted_kernel<kBankSquareCols><<<tiles, dim3(32, kBlockRows), 0, stream>>>(in, out);
  CUDA_CHECK_LAUNCH();
}

void bank_conflicts_rect_conflicted(const float* in, float* out, int tiles, cudaStream_t stream) {
  if (tiles <= 0) return;
  gram_conflicted_kernel<kBankRectCols><<<tiles, dim3(32, kBlockRows), 0, stream>>>(in, out);
  CUDA_CHECK_LAUNCH();
}
