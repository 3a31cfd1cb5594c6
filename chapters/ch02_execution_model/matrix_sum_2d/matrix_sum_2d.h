// Exercise ch02 / matrix_sum_2d: C = A + B for an ny x nx matrix of floats, with a 2D grid of
// 2D blocks.
//
// Frozen API. a, b and c are device pointers to ny rows of nx floats each, rows stored one
// after the other with no padding: element (ix, iy) is at index iy * nx + ix. nx and ny may be
// 0 (do nothing), 1, or anything that is not a multiple of the block's sides, and ny may be
// larger than 65535 * blockDim.y: gridDim.y is limited to 65535, so a grid must be able to
// cover more rows than it has threads in y. The work is enqueued on `stream`; the function
// returns without waiting.
#pragma once

#include <cuda_runtime.h>

void matrix_sum_2d(const float* a, const float* b, float* c, int nx, int ny, cudaStream_t stream);
