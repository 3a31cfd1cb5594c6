// Course-owned code the benchmark compares against; not part of the student's API.
#pragma once

#include <cuda_runtime.h>

// Read rows, write columns: one element per thread, the starting point of the speedups.
void transpose_naive_baseline(const float* in, float* out, int nx, int ny, cudaStream_t stream);
