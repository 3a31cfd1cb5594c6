#include "aat.h"

#include <cstddef>

#include "course/check.h"

// One block of 32 x 32 threads per 32 x 32 tile of C, as in the Best Practices Guide. Block
// (bx, by) needs rows by*32.. of A (for i) and rows bx*32.. of A (for j), k-slice by k-slice.
constexpr int kTile = 32;

__global__ void __launch_bounds__(kTile * kTile)
    aat_kernel(const float* __restrict__ a, float* __restrict__ c, int m, int k) {
  // @begin-solution: Per 32-wide slice l0 of k: load a_tile[y][x] = A[i][l0 + x] (i = the
  // @hint: block's row by*32 + y) and the transposed tile t_tile[x][y] = A[bx*32 + y][l0 + x];
  // @hint: both global reads then run along a row of A with threadIdx.x (coalesced), zero
  // @hint: outside the matrix. __syncthreads(), accumulate a_tile[y][x] * t_tile[x][threadIdx.x]
  // @hint: over x, __syncthreads() before the next slice overwrites the tiles. Storing t_tile
  // @hint: column-wise is a 32-way bank conflict with t_tile[32][32]: pad it to [32][33].
  // @hint: aat_tiled_unpadded in aat_baseline.cu is the version without the padding.
  __shared__ float a_tile[kTile][kTile];
  // t_tile[l][x] = A[j0 + x][l0 + l]. The padding puts word (x, y) in bank (33x + y) % 32, so
  // the column store below touches 32 different banks.
  __shared__ float t_tile[kTile][kTile + 1];
  const int i = blockIdx.y * kTile + threadIdx.y;
  const int j0 = blockIdx.x * kTile;
  const int tj = j0 + threadIdx.y;  // the row of A this thread loads into t_tile
  float sum = 0.0f;
  for (int l0 = 0; l0 < k; l0 += kTile) {
    const int l = l0 + threadIdx.x;
    a_tile[threadIdx.y][threadIdx.x] =
        (i < m && l < k) ? a[static_cast<std::size_t>(i) * k + l] : 0.0f;
    t_tile[threadIdx.x][threadIdx.y] =
        (tj < m && l < k) ? a[static_cast<std::size_t>(tj) * k + l] : 0.0f;
    // Read-after-write: the products below use elements loaded by other threads.
    __syncthreads();
#pragma unroll
    for (int x = 0; x < kTile; ++x) sum += a_tile[threadIdx.y][x] * t_tile[x][threadIdx.x];
    // Write-after-read: the next slice must not overwrite tiles still being read.
    __syncthreads();
  }
  const int j = j0 + threadIdx.x;
  if (i < m && j < m) c[static_cast<std::size_t>(i) * m + j] = sum;
  // @skeleton: (void)a; (void)c; (void)m; (void)k;
  // @end-solution
}

void aat(const float* a, float* c, int m, int k, cudaStream_t stream) {
  if (m <= 0) return;
  // @begin-solution: One block of kTile x kTile threads per 32 x 32 tile of C (round m up in
  // @hint: both grid dimensions), on `stream`, then CUDA_CHECK_LAUNCH(). k = 0 still launches:
  // @hint: C must be written with zeros.
  const dim3 grid((m + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  aat_kernel<<<grid, dim3(kTile, kTile), 0, stream>>>(a, c, m, k);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)a; (void)c; (void)k; (void)stream;
  // @end-solution
}
