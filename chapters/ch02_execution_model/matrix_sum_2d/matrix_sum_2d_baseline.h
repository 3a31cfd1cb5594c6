// Course-owned GPU code for the matrix_sum_2d benchmark.
#pragma once

#include <cuda_runtime.h>

// C = A + B with one thread per element and the given block shape; the grid is
// ceil(nx / block.x) x ceil(ny / block.y), so ny must stay within 65535 * block.y.
void matrix_sum_2d_with_block(const float* a, const float* b, float* c, int nx, int ny,
                              dim3 block, cudaStream_t stream);
