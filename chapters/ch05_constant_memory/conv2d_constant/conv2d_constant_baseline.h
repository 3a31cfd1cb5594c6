// Course-owned code the conv2d_constant benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

// The same filter as conv2d_constant, built the same way (32x8 threads per 32x32 output tile,
// four pixels per thread, the clamped input tile and its halo staged in shared memory, one
// kernel per radius with the mask loops unrolled), but reading the mask from global memory:
// `mask` is a device pointer to (2 * radius + 1)^2 floats passed as a kernel argument, so the
// only difference from a constant-memory kernel is where the weights live.
void conv2d_constant_global_mask(const float* in, float* out, int width, int height,
                                 const float* mask, int radius, cudaStream_t stream);
