// Course-only: the readable source of ../aat_kernels.cu (python3
// scripts/compile_course_kernels.py compiles it to that file's PTX). The template leaves this
// folder out: the tile kernel is the exercise's answer but for the padding.
#include <cstddef>

#include "aat_kernels.h"

namespace course_aat {

__global__ void naive_kernel(const float* __restrict__ a, float* __restrict__ c, int m, int k) {
  const int i = blockIdx.y * kTile + threadIdx.y;
  const int j = blockIdx.x * kTile + threadIdx.x;
  if (i >= m || j >= m) return;
  const float* ai = a + static_cast<std::size_t>(i) * k;
  const float* aj = a + static_cast<std::size_t>(j) * k;  // stride k across the warp
  float sum = 0.0f;
  for (int l = 0; l < k; ++l) sum += ai[l] * aj[l];
  c[static_cast<std::size_t>(i) * m + j] = sum;
}

// The Best Practices Guide's coalescedMultiply generalised to any m and k, without padding.
__global__ void tiled_unpadded_kernel(const float* __restrict__ a, float* __restrict__ c, int m,
                                      int k) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float t_tile[kTile][kTile];  // t_tile[l][x] = A[j0 + x][l0 + l]
  const int i = blockIdx.y * kTile + threadIdx.y;
  const int j0 = blockIdx.x * kTile;
  const int tj = j0 + threadIdx.y;  // the row of A this thread loads into t_tile
  float sum = 0.0f;
  for (int l0 = 0; l0 < k; l0 += kTile) {
    const int l = l0 + threadIdx.x;
    a_tile[threadIdx.y][threadIdx.x] =
        (i < m && l < k) ? a[static_cast<std::size_t>(i) * k + l] : 0.0f;
    // A warp (fixed threadIdx.y) writes a column of t_tile: words x * 32 + y, one bank.
    t_tile[threadIdx.x][threadIdx.y] =
        (tj < m && l < k) ? a[static_cast<std::size_t>(tj) * k + l] : 0.0f;
    __syncthreads();
    for (int x = 0; x < kTile; ++x) sum += a_tile[threadIdx.y][x] * t_tile[x][threadIdx.x];
    __syncthreads();
  }
  const int j = j0 + threadIdx.x;
  if (i < m && j < m) c[static_cast<std::size_t>(i) * m + j] = sum;
}

}  // namespace course_aat
