// Definition of the course-owned baseline declared in matmul_ladder.h: cuBLAS SGEMM. Host code
// only (no kernel of its own, so no nvcc), compiled once per build into the library every
// rung's test and benchmark binary links.
#include "matmul_ladder.h"

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "course/check.h"

namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + cublasGetStatusString(status));
}

cublasHandle_t handle() {
  // One handle for the process, created on first use; the driver reclaims it at exit.
  static cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    check_cublas(cublasCreate(&created), "cublasCreate");
    // FP32 inputs, FP32 arithmetic: the same work the student's kernel does. TF32 tensor
    // cores would be a different (less precise) computation.
    check_cublas(cublasSetMathMode(created, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    return created;
  }();
  return h;
}

}  // namespace

void matmul_ladder_cublas(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream) {
  check_cublas(cublasSetStream(handle(), stream), "cublasSetStream");
  const float one = 1.0f, zero = 0.0f;
  // cuBLAS is column-major: a row-major M x N matrix is its N x M transpose, so computing
  // C^T = B^T A^T in column-major order writes row-major C.
  check_cublas(cublasSgemm(handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero,
                           C, N),
               "cublasSgemm");
}
