#include "transpose_global.h"

#include <cstddef>

#include "course/check.h"

// Every kernel: out[x * ny + y] = in[y * nx + x]. Indices are formed in std::size_t because
// nx * ny may exceed the range of int.

__global__ void read_rows_kernel(const float* __restrict__ in, float* __restrict__ out, int nx,
                                 int ny) {
  // TODO: x from the grid's x dimension (along a row of in), y from its y
  //       dimension; guard x < nx && y < ny.
  (void)in; (void)out; (void)nx; (void)ny;
}

__global__ void read_columns_kernel(const float* __restrict__ in, float* __restrict__ out,
                                    int nx, int ny) {
  // TODO: Swap the roles: y from the grid's x dimension (along a row of out), x
  //       from its y dimension.
  (void)in; (void)out; (void)nx; (void)ny;
}

__global__ void unrolled_kernel(const float* __restrict__ in, float* __restrict__ out, int nx,
                                int ny) {
  // TODO: Like read_columns, but the block covers 4 * blockDim.x values of y:
  //       y0 = blockIdx.x * blockDim.x * 4 + threadIdx.x, then y0 + k * blockDim.x for
  //       k = 0..3. Load all four (guarded) before storing them.
  (void)in; (void)out; (void)nx; (void)ny;
}

__global__ void diagonal_kernel(const float* __restrict__ in, float* __restrict__ out, int nx,
                                int ny) {
  // TODO: Renumber the block, then index as read_columns with (bx, by) in place of
  //       (blockIdx.x, blockIdx.y): bid = blockIdx.x + gridDim.x * blockIdx.y;
  //       by = bid % gridDim.y; bx = (bid / gridDim.y + by) % gridDim.x. Successive blocks
  //       then walk a diagonal, and every (bx, by) still occurs exactly once.
  (void)in; (void)out; (void)nx; (void)ny;
}

void transpose_read_rows(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  // TODO: 32 x 8 blocks; grid ceil(nx / 32) x ceil(ny / 8); CUDA_CHECK_LAUNCH().
  (void)in; (void)out; (void)nx; (void)ny; (void)stream;
}

void transpose_read_columns(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  // TODO: 32 x 8 blocks; grid ceil(ny / 32) x ceil(nx / 8).
  (void)in; (void)out; (void)nx; (void)ny; (void)stream;
}

void transpose_unrolled(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  // TODO: 32 x 8 blocks; grid ceil(ny / 128) x ceil(nx / 8).
  (void)in; (void)out; (void)nx; (void)ny; (void)stream;
}

void transpose_diagonal(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  // TODO: Same launch as transpose_read_columns.
  (void)in; (void)out; (void)nx; (void)ny; (void)stream;
}
