// Course-owned code the stencil_constant benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

// The same stencil as stencil_constant, tiled the same way (256 threads per block, one tile of
// 1024 outputs and its 4-element halos per block, staged in shared memory), but reading its nine
// coefficients from global memory: `coefficients` is a device pointer passed as a kernel
// argument, so the only difference from a constant-memory kernel is where the coefficients live.
void stencil_constant_global_coefficients(const float* in, float* out, int n,
                                          const float* coefficients, cudaStream_t stream);
