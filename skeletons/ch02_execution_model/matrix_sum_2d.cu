#include "matrix_sum_2d.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"

__global__ void matrix_sum_2d_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                     float* __restrict__ c, int nx, int ny) {
  // TODO: Map (blockIdx, threadIdx) to a column ix (x) and a row iy (y); the element is
  //       at iy * nx + ix (use std::size_t: ny * nx can pass 2^31). The grid always has enough
  //       blocks in x to cover nx, but at most 65535 in y: loop over rows with a stride of
  //       gridDim.y * blockDim.y so any ny is covered; skip columns outside the matrix.
  //       Give the usual case, a grid that covers every row, its own path without the loop:
  //       the loop's bookkeeping costs a few percent of the bandwidth.
  (void)a; (void)b; (void)c; (void)nx; (void)ny;
}

void matrix_sum_2d(const float* a, const float* b, float* c, int nx, int ny, cudaStream_t stream) {
  if (nx <= 0 || ny <= 0) return;
  // TODO: Choose a 2D block whose x side is a multiple of 32 (a warp then reads one
  //       contiguous stretch of a row), a 2D grid of ceil(nx / block.x) x ceil(ny / block.y)
  //       blocks capped at 65535 in y, launch on `stream` and check the launch.
  (void)a; (void)b; (void)c; (void)stream;
}
