// Course-owned kernels the transpose benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

// A copy with the same launch shape as the tiled transpose (32x8 threads per 32x32 tile,
// four elements per thread, coalesced reads and writes): the fair ceiling for a transpose.
void transpose_shared_copy_same_shape(const float* in, float* out, int rows, int cols,
                                      cudaStream_t stream);
// One element per thread, reads coalesced, writes strided by `rows`: what tiling fixes.
void transpose_shared_naive(const float* in, float* out, int rows, int cols, cudaStream_t stream);
