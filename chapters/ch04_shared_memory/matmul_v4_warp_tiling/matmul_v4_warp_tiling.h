// Exercise ch04 / matmul_v4_warp_tiling: C = A B in single precision, each warp computing a
// tile of C and each thread a block of it in registers, with vectorised (float4) loads and the
// next tile of A and B fetched while the current one is multiplied (double buffering).
//
// Frozen API: the tests and the benchmark call exactly this. A is M x K, B is K x N and C is
// M x N, all row-major (element (i, j) of C at C[i * N + j]) and all device pointers to
// float-aligned memory. M, N and K may be 0 or any size, multiples of nothing: with M or N
// equal to 0 there is nothing to do; with K equal to 0, C is all zeros. Nothing outside
// C[0, M * N) may be written; A and B must not be modified.
// The work is enqueued on `stream`; the function returns without waiting for it.
#pragma once

#include <cuda_runtime.h>

void matmul_v4_warp_tiling(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream);
