// Exercise ch04 / transpose_shared: out = transpose(in) through 32x32 shared-memory tiles.
//
// Frozen API: the tests and the benchmark call exactly this. `in` holds a rows x cols matrix
// in row-major order (element (r, c) at in[r * cols + c]); `out` receives the cols x rows
// transpose, also row-major (element (c, r) at out[c * rows + r]). Both are device pointers
// to float-aligned memory. rows and cols may be 0 (do nothing), 1, or any size that is not a
// multiple of the tile, up to 2,000,000 each (rows * cols fits in memory). Nothing outside
// out[0, rows * cols) may be written, and `in` must not be modified.
// The work is enqueued on `stream`; the function returns without waiting for it.
#pragma once

#include <cuda_runtime.h>

void transpose_shared(const float* in, float* out, int rows, int cols, cudaStream_t stream);
