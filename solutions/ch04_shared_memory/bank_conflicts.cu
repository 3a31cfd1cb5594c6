#include "bank_conflicts.h"

#include <cstddef>

#include "course/check.h"

// One block per tile, 32 x 8 threads: thread (x, y) computes G[y + 8m][x] for m = 0..3, so a
// warp (fixed y, x = 0..31) reads T[y + 8m][k] (one word: a broadcast) and T[x][k] (32 rows
// of the tile at the same column k: the access that conflicts unless the rows are padded).
constexpr int kBlockRows = 8;

template <int kCols>
__global__ void __launch_bounds__(32 * kBlockRows)
    gram_kernel(const float* __restrict__ in, float* __restrict__ out) {
  // @begin-solution: Copy gram_conflicted_kernel from bank_conflicts_baseline.cu and remove
  // @hint: its bank conflicts: with tile[32][kCols] the word T[x][k] is in bank
  // @hint: (x * kCols + k) % 32 = k % 32 for every x, so one warp's 32 reads of a column go to
  // @hint: one bank. Pad each row by one word (tile[32][kCols + 1]: bank (x + k) % 32, all
  // @hint: different) or swizzle the column index (store T[r][c] at tile[r][c ^ r]).
  // @hint: Load the tile coalesced, __syncthreads(), then accumulate four sums per thread.
  // Row r starts at word r * (kCols + 1): consecutive rows start one bank apart.
  __shared__ float tile[kBankTileRows][kCols + 1];
  const float* src = in + static_cast<std::size_t>(blockIdx.x) * kBankTileRows * kCols;
  for (int r = threadIdx.y; r < kBankTileRows; r += kBlockRows)
    for (int c = threadIdx.x; c < kCols; c += 32) tile[r][c] = src[r * kCols + c];
  // Every thread reads rows that other warps loaded.
  __syncthreads();

  const int j = threadIdx.x;
  float acc[kBankTileRows / kBlockRows] = {};
#pragma unroll 8
  for (int k = 0; k < kCols; ++k) {
    const float tj = tile[j][k];  // bank (j + k) % 32: conflict-free
#pragma unroll
    for (int m = 0; m < kBankTileRows / kBlockRows; ++m)
      acc[m] += tile[threadIdx.y + m * kBlockRows][k] * tj;
  }
  float* dst = out + static_cast<std::size_t>(blockIdx.x) * kBankTileRows * kBankTileRows;
#pragma unroll
  for (int m = 0; m < kBankTileRows / kBlockRows; ++m)
    dst[(threadIdx.y + m * kBlockRows) * kBankTileRows + j] = acc[m];
  // @skeleton: (void)in; (void)out;
  // @end-solution
}

void bank_conflicts_square(const float* in, float* out, int tiles, cudaStream_t stream) {
  if (tiles <= 0) return;
  // @begin-solution: Launch one block of 32 x kBlockRows threads per tile on `stream`
  // @hint: (gridDim.x takes up to 2^31 - 1 blocks), then CUDA_CHECK_LAUNCH().
  gram_kernel<kBankSquareCols><<<tiles, dim3(32, kBlockRows), 0, stream>>>(in, out);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)stream;
  // @end-solution
}

void bank_conflicts_rect(const float* in, float* out, int tiles, cudaStream_t stream) {
  if (tiles <= 0) return;
  // @begin-solution: The same launch with gram_kernel<kBankRectCols>.
  gram_kernel<kBankRectCols><<<tiles, dim3(32, kBlockRows), 0, stream>>>(in, out);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)stream;
  // @end-solution
}
