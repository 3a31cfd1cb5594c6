// Exercise ch04 / matmul_v5_async_copy: C = A B in single precision, the tiles of A and B copied
// from global to shared memory with asynchronous copies (cp.async) into a multi-stage pipeline,
// so that later tiles are in flight while the current one is multiplied, in a shared layout
// whose reads by the warp tiles are free of bank conflicts.
//
// Frozen API: the tests and the benchmark call exactly this. A is M x K, B is K x N and C is
// M x N, all row-major (element (i, j) of C at C[i * N + j]) and all device pointers to
// float-aligned memory. M, N and K may be 0 or any size, multiples of nothing: with M or N
// equal to 0 there is nothing to do; with K equal to 0, C is all zeros. Nothing outside
// C[0, M * N) may be written; A and B must not be modified.
// The work is enqueued on `stream`; the function returns without waiting for it.
#pragma once

#include <cuda_runtime.h>

void matmul_v5_async_copy(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream);
