// Course-owned kernels the bank_conflicts benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

// The same computation as bank_conflicts_square / _rect with an unpadded tile: every read of
// T[j][k] by a warp (j = threadIdx.x) hits one bank 32 times.
void bank_conflicts_square_conflicted(const float* in, float* out, int tiles,
                                      cudaStream_t stream);
void bank_conflicts_rect_conflicted(const float* in, float* out, int tiles, cudaStream_t stream);
