#include "transpose_global.h"

#include <cstddef>

#include "course/check.h"

// Every kernel: out[x * ny + y] = in[y * nx + x]. Indices are formed in std::size_t because
// nx * ny may exceed the range of int.

__global__ void read_rows_kernel(const float* __restrict__ in, float* __restrict__ out, int nx,
                                 int ny) {
  // @begin-solution: x from the grid's x dimension (along a row of in), y from its y
  // @hint: dimension; guard x < nx && y < ny.
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < nx && y < ny)
    out[static_cast<std::size_t>(x) * ny + y] = in[static_cast<std::size_t>(y) * nx + x];
  // @skeleton: (void)in; (void)out; (void)nx; (void)ny;
  // @end-solution
}

__global__ void read_columns_kernel(const float* __restrict__ in, float* __restrict__ out,
                                    int nx, int ny) {
  // @begin-solution: Swap the roles: y from the grid's x dimension (along a row of out), x
  // @hint: from its y dimension.
  const int y = blockIdx.x * blockDim.x + threadIdx.x;
  const int x = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < nx && y < ny)
    out[static_cast<std::size_t>(x) * ny + y] = in[static_cast<std::size_t>(y) * nx + x];
  // @skeleton: (void)in; (void)out; (void)nx; (void)ny;
  // @end-solution
}

__global__ void unrolled_kernel(const float* __restrict__ in, float* __restrict__ out, int nx,
                                int ny) {
  // @begin-solution: Like read_columns, but the block covers 4 * blockDim.x values of y:
  // @hint: y0 = blockIdx.x * blockDim.x * 4 + threadIdx.x, then y0 + k * blockDim.x for
  // @hint: k = 0..3. Load all four (guarded) before storing them.
  const int x = blockIdx.y * blockDim.y + threadIdx.y;
  const int y0 = blockIdx.x * blockDim.x * 4 + threadIdx.x;
  if (x >= nx) return;
  float v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int y = y0 + k * blockDim.x;
    if (y < ny) v[k] = in[static_cast<std::size_t>(y) * nx + x];
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int y = y0 + k * blockDim.x;
    if (y < ny) out[static_cast<std::size_t>(x) * ny + y] = v[k];
  }
  // @skeleton: (void)in; (void)out; (void)nx; (void)ny;
  // @end-solution
}

__global__ void diagonal_kernel(const float* __restrict__ in, float* __restrict__ out, int nx,
                                int ny) {
  // @begin-solution: Renumber the block, then index as read_columns with (bx, by) in place of
  // @hint: (blockIdx.x, blockIdx.y): bid = blockIdx.x + gridDim.x * blockIdx.y;
  // @hint: by = bid % gridDim.y; bx = (bid / gridDim.y + by) % gridDim.x. Successive blocks
  // @hint: then walk a diagonal, and every (bx, by) still occurs exactly once.
  const unsigned bid = blockIdx.x + gridDim.x * blockIdx.y;
  const unsigned by = bid % gridDim.y;
  const unsigned bx = (bid / gridDim.y + by) % gridDim.x;
  const int y = bx * blockDim.x + threadIdx.x;
  const int x = by * blockDim.y + threadIdx.y;
  if (x < nx && y < ny)
    out[static_cast<std::size_t>(x) * ny + y] = in[static_cast<std::size_t>(y) * nx + x];
  // @skeleton: (void)in; (void)out; (void)nx; (void)ny;
  // @end-solution
}

void transpose_read_rows(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  // @begin-solution: 32 x 8 blocks; grid ceil(nx / 32) x ceil(ny / 8); CUDA_CHECK_LAUNCH().
  const dim3 block(32, 8);
  const dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
  read_rows_kernel<<<grid, block, 0, stream>>>(in, out, nx, ny);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)nx; (void)ny; (void)stream;
  // @end-solution
}

void transpose_read_columns(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  // @begin-solution: 32 x 8 blocks; grid ceil(ny / 32) x ceil(nx / 8).
  const dim3 block(32, 8);
  const dim3 grid((ny + block.x - 1) / block.x, (nx + block.y - 1) / block.y);
  read_columns_kernel<<<grid, block, 0, stream>>>(in, out, nx, ny);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)nx; (void)ny; (void)stream;
  // @end-solution
}

void transpose_unrolled(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  // @begin-solution: 32 x 8 blocks; grid ceil(ny / 128) x ceil(nx / 8).
  const dim3 block(32, 8);
  const dim3 grid((ny + 4 * block.x - 1) / (4 * block.x), (nx + block.y - 1) / block.y);
  unrolled_kernel<<<grid, block, 0, stream>>>(in, out, nx, ny);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)nx; (void)ny; (void)stream;
  // @end-solution
}

void transpose_diagonal(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  // @begin-solution: Same launch as transpose_read_columns.
  const dim3 block(32, 8);
  const dim3 grid((ny + block.x - 1) / block.x, (nx + block.y - 1) / block.y);
  diagonal_kernel<<<grid, block, 0, stream>>>(in, out, nx, ny);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)nx; (void)ny; (void)stream;
  // @end-solution
}
