// Definition of matmul_ladder_device_reference (matmul_ladder_measure.h): the product every
// rung's benchmark output is compared with. Course code, compiled once into the ladder's
// library; not one of the rungs, and not timed.
#include "matmul_ladder_measure.h"

#include "course/check.h"

namespace {

constexpr int kTile = 16;

// C = A B, row-major, one thread per element of C, tiles of A and B staged in shared memory;
// FP32 fused multiply-adds in k order.
__global__ void reference_product(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, int M, int N, int K) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = row < M && ka < K ? A[static_cast<size_t>(row) * K + ka] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = kb < K && col < N ? B[static_cast<size_t>(kb) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < kTile; ++k) sum = fmaf(a_tile[threadIdx.y][k], b_tile[k][threadIdx.x], sum);
    __syncthreads();
  }
  if (row < M && col < N) C[static_cast<size_t>(row) * N + col] = sum;
}

}  // namespace

void matmul_ladder_device_reference(const float* A, const float* B, float* C, int M, int N, int K,
                                    cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  const dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  reference_product<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  CUDA_CHECK(cudaGetLastError());
}
