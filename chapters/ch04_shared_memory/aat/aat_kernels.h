// The kernels of aat's course baselines (aat_baseline.cu launches them). aat_kernels.cu holds
// them compiled to PTX; their readable source is course-only, being nearly the exercise's
// answer (scripts/compile_course_kernels.py writes the one from the other).
#pragma once

#include <cuda_runtime.h>

namespace course_aat {

constexpr int kTile = 32;

// One thread per element of C, A read straight from global memory; blocks of kTile x kTile.
__global__ void naive_kernel(const float* __restrict__ a, float* __restrict__ c, int m, int k);
// The shared-memory tiles, unpadded: storing a column of the transposed tile is a 32-way bank
// conflict. Blocks of kTile x kTile.
__global__ void tiled_unpadded_kernel(const float* __restrict__ a, float* __restrict__ c, int m,
                                      int k);

}  // namespace course_aat
