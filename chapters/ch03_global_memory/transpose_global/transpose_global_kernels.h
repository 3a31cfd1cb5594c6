// The kernel of transpose_global's course baseline (transpose_global_baseline.cu launches it).
// transpose_global_kernels.cu holds it compiled to PTX; its readable source is course-only,
// being the exercise's read_rows kernel (scripts/compile_course_kernels.py writes the one from
// the other).
#pragma once

#include <cuda_runtime.h>

// Read rows, write columns: one element per thread, blocks of any shape covering nx x ny.
__global__ void transpose_naive_baseline_kernel(const float* __restrict__ in,
                                                float* __restrict__ out, int nx, int ny);
