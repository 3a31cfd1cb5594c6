// Shared by the five rungs of the matrix-product ladder (matmul_v1_naive, matmul_v2_shared_tiles,
// matmul_v3_register_blocking, matmul_v4_warp_tiling, matmul_v5_async_copy): course-owned
// helpers, not student code.
// Every rung's launcher has the same shape (see the rung's own header):
//
//   void matmul_vK_name(const float* A, const float* B, float* C, int M, int N, int K,
//                       cudaStream_t stream);
//
// The CPU reference is defined in matmul_ladder_reference.cpp, cuBLAS's product in
// matmul_ladder_baseline.cpp (and the benchmark's own device reference in
// matmul_ladder_device_reference.cu): compiled once, linked into every rung's test and
// benchmark binary.
#pragma once

#include <cuda_runtime.h>

#include <vector>

// --- CPU reference, defined in matmul_ladder_reference.cpp --------------------------------

// C = A B with double-precision accumulation, rounded to float once at the end.
std::vector<float> matmul_ladder_reference(const std::vector<float>& A, const std::vector<float>& B,
                                           int M, int N, int K);
// One element of C in double precision: for spot checks of big products.
double matmul_ladder_reference_at(const std::vector<float>& A, const std::vector<float>& B, int N,
                                  int K, int i, int j);

// --- course-owned GPU code for the benchmark, defined in matmul_ladder_baseline.cpp --------

// cuBLAS SGEMM on the same row-major problem, FP32 arithmetic (CUBLAS_DEFAULT_MATH, no TF32).
void matmul_ladder_cublas(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream);
