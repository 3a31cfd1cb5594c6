// Course-owned GPU code for the matmul_v3_register_blocking benchmark (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// cuBLAS SGEMM on the same row-major problem, FP32 arithmetic (CUBLAS_DEFAULT_MATH, no TF32).
void matmul_v3_register_blocking_cublas(const float* A, const float* B, float* C, int M, int N, int K,
                   cudaStream_t stream);
// Fills data[0, n) with hashed values in [-1, 1): big inputs without a huge host draw.
void matmul_v3_register_blocking_fill_hash(float* data, std::size_t n, std::uint64_t seed, cudaStream_t stream);
