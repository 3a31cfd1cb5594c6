// Exercise ch03 / transpose_global: matrix transpose with global memory only, four ways.
//
// Frozen API. `in` is ny rows of nx floats (row-major); `out` is nx rows of ny floats, and
// every version computes out[x * ny + y] = in[y * nx + x] for x < nx, y < ny. nx, ny >= 1,
// any values (not only multiples of 32). Device pointers; enqueued on `stream`, returning
// without waiting.
//
//   transpose_read_rows      one element per thread, consecutive threads along a row of in:
//                            reads coalesced, writes strided by ny.
//   transpose_read_columns   one element per thread, consecutive threads along a row of out:
//                            writes coalesced, reads strided by nx (the L1 and L2 catch the
//                            neighbouring reads of the block's other warps).
//   transpose_unrolled       read_columns with each thread doing 4 elements blockDim.x apart,
//                            so more loads are in flight per thread.
//   transpose_diagonal       read_columns with the blocks reassigned along diagonals, so
//                            blocks running at the same time touch different DRAM regions.
//
// The benchmark measures your speedups against the course's naive transpose (read rows,
// transpose_global_baseline.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

void transpose_read_rows(const float* in, float* out, int nx, int ny, cudaStream_t stream);
void transpose_read_columns(const float* in, float* out, int nx, int ny, cudaStream_t stream);
void transpose_unrolled(const float* in, float* out, int nx, int ny, cudaStream_t stream);
void transpose_diagonal(const float* in, float* out, int nx, int ny, cudaStream_t stream);
