#include "transpose_shared.h"

#include <cstddef>

#include "course/check.h"

// One block moves one 32x32 tile with 32x8 threads, each thread handling four rows: enough
// loads in flight per thread to hide memory latency, and few enough threads per tile that
// the index arithmetic stays cheap.
constexpr int kTile = 32;
constexpr int kBlockRows = 8;

__global__ void transpose_shared_kernel(const float* __restrict__ in, float* __restrict__ out,
                                        int rows, int cols) {
  // @begin-solution: Declare a __shared__ tile with one float of padding per row, so that
  // @hint: reading a column of it hits 32 different banks. Read the block's input tile row by row
  // @hint: (threadIdx.x runs along a row of `in`: coalesced), wait for the whole tile with
  // @hint: __syncthreads(), then write the tile's columns as rows of `out` (threadIdx.x runs
  // @hint: along a row of `out`: coalesced again). Guard every access against rows and cols.
  __shared__ float tile[kTile][kTile + 1];

  const int in_col = blockIdx.x * kTile + threadIdx.x;
  const int in_row0 = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kBlockRows) {
    const int r = in_row0 + j;
    if (r < rows && in_col < cols)
      tile[threadIdx.y + j][threadIdx.x] = in[static_cast<std::size_t>(r) * cols + in_col];
  }
  // Every thread reads elements another thread wrote.
  __syncthreads();

  // The block's tile lands at the mirrored position: its columns become rows of out.
  const int out_col = blockIdx.y * kTile + threadIdx.x;   // a row index of in
  const int out_row0 = blockIdx.x * kTile + threadIdx.y;  // a column index of in
  for (int j = 0; j < kTile; j += kBlockRows) {
    const int r = out_row0 + j;
    if (r < cols && out_col < rows)
      out[static_cast<std::size_t>(r) * rows + out_col] = tile[threadIdx.x][threadIdx.y + j];
  }
  // @skeleton: (void)in; (void)out; (void)rows; (void)cols;
  // @end-solution
}

void transpose_shared(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // @begin-solution: Launch one block of kTile x kBlockRows threads per 32x32 tile of `in`
  // @hint: (grid.x over columns, grid.y over rows, rounded up) on `stream`, then
  // @hint: CUDA_CHECK_LAUNCH().
  const dim3 block(kTile, kBlockRows);
  const dim3 grid((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
  transpose_shared_kernel<<<grid, block, 0, stream>>>(in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)stream;
  // @end-solution
}
