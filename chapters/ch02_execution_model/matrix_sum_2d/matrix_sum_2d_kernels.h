// The kernel of matrix_sum_2d's course baseline (matrix_sum_2d_baseline.cu launches it).
// matrix_sum_2d_kernels.cu holds it compiled to PTX; its readable source is course-only, being
// the exercise's answer for any grid that covers the rows (scripts/compile_course_kernels.py
// writes the one from the other).
#pragma once

#include <cuda_runtime.h>

namespace course_matrix_sum_2d {

// C = A + B, one thread per element, any block shape; the grid covers nx x ny.
__global__ void sum_one_per_thread(const float* __restrict__ a, const float* __restrict__ b,
                                   float* __restrict__ c, int nx, int ny);

}  // namespace course_matrix_sum_2d
