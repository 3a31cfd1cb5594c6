#include "matmul_v3_register_blocking.h"

#include <cstddef>
#include <cstdint>

#include "course/check.h"

// Block tile of C: kBM x kBN, walked along k in steps of kBK. Each of the 256 threads owns a
// kTM x kTN block of C in registers: per step of k it loads kTM + kTN values from shared
// memory and does kTM * kTN multiply-adds, 4x the arithmetic per shared load of rung 2.
constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 8;
constexpr int kTM = 8;
constexpr int kTN = 8;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);  // 256
// A's tile is stored transposed (k-major); 4 floats of padding per row keep its transposing
// stores conflict-free and every row 16-byte aligned for float4 reads.
constexpr int kAPad = 4;

// kVec: K and N are multiples of 4 and A, B, C are 16-byte aligned, so whole float4s are
// either inside or outside the matrices and global loads and stores can be 16 bytes wide.
template <bool kVec>
__global__ void __launch_bounds__(kThreads, 2)
    matmul_v3_register_blocking_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
  // @begin-solution: Stage a kBM x kBK tile of A (stored transposed: a_tile[k][m]) and a
  // @hint: kBK x kBN tile of B in shared memory per step of k, zero outside the matrices, with
  // @hint: coalesced global loads. Between two __syncthreads(), each thread loads kTM values
  // @hint: of a_tile[k][...] and kTN of b_tile[k][...] into registers and accumulates their
  // @hint: outer product into float acc[kTM][kTN]. Finally write acc to C, guarding M and N.
  __shared__ __align__(16) float a_tile[kBK][kBM + kAPad];
  __shared__ __align__(16) float b_tile[kBK][kBN];

  const int tid = threadIdx.x;
  const int trow = tid / (kBN / kTN);  // this thread's rows: trow * kTM + [0, kTM)
  const int tcol = tid % (kBN / kTN);  // its columns: tcol * 4 + [0, 4) and kBN/2 + the same
  const int block_row = blockIdx.y * kBM;
  const int block_col = blockIdx.x * kBN;

  float acc[kTM][kTN] = {};

  for (int k0 = 0; k0 < K; k0 += kBK) {
    if constexpr (kVec) {
      // One float4 of A per thread: 2 threads per row of the 128 x 8 tile.
      const int r = tid / 2, c = (tid % 2) * 4;
      const int gr = block_row + r, gc = k0 + c;
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (gr < M && gc < K)
        v = *reinterpret_cast<const float4*>(&A[static_cast<std::size_t>(gr) * K + gc]);
      a_tile[c + 0][r] = v.x;
      a_tile[c + 1][r] = v.y;
      a_tile[c + 2][r] = v.z;
      a_tile[c + 3][r] = v.w;
      // One float4 of B per thread: 32 threads per row of the 8 x 128 tile.
      const int br = tid / 32, bc = (tid % 32) * 4;
      const int gbr = k0 + br, gbc = block_col + bc;
      float4 w = make_float4(0.f, 0.f, 0.f, 0.f);
      if (gbr < K && gbc < N)
        w = *reinterpret_cast<const float4*>(&B[static_cast<std::size_t>(gbr) * N + gbc]);
      *reinterpret_cast<float4*>(&b_tile[br][bc]) = w;
    } else {
      // Scalar loads for any shape; a warp still reads whole 32-byte sectors.
#pragma unroll
      for (int i = 0; i < (kBM * kBK) / kThreads; ++i) {
        const int e = tid + i * kThreads;
        const int r = e / kBK, c = e % kBK;
        const int gr = block_row + r, gc = k0 + c;
        a_tile[c][r] = (gr < M && gc < K) ? A[static_cast<std::size_t>(gr) * K + gc] : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < (kBK * kBN) / kThreads; ++i) {
        const int e = tid + i * kThreads;
        const int r = e / kBN, c = e % kBN;
        const int gr = k0 + r, gc = block_col + c;
        b_tile[r][c] = (gr < K && gc < N) ? B[static_cast<std::size_t>(gr) * N + gc] : 0.0f;
      }
    }
    __syncthreads();  // both tiles complete

#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      // A warp reads two distinct a_tile addresses (broadcast) and 64 consecutive b_tile
      // floats: no bank conflicts.
      const float4 a0 = *reinterpret_cast<const float4*>(&a_tile[k][trow * kTM]);
      const float4 a1 = *reinterpret_cast<const float4*>(&a_tile[k][trow * kTM + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&b_tile[k][tcol * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&b_tile[k][kBN / 2 + tcol * 4]);
      const float a[kTM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[kTN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // all reads done before the next step overwrites the tiles
  }

#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int r = block_row + trow * kTM + i;
    if (r >= M) break;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int c = block_col + half * (kBN / 2) + tcol * 4;
      float* out = &C[static_cast<std::size_t>(r) * N + c];
      const float* v = &acc[i][half * 4];
      if constexpr (kVec) {
        if (c < N) *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (c + j < N) out[j] = v[j];
      }
    }
  }
  // @skeleton: (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;
  // @end-solution
}

void matmul_v3_register_blocking(const float* A, const float* B, float* C, int M, int N, int K,
                                 cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  // @begin-solution: Launch kThreads threads per block and one block per kBM x kBN tile of C
  // @hint: (grid.x over N, grid.y over M, rounded up) on `stream`; choose the float4
  // @hint: instantiation only when K % 4 == 0, N % 4 == 0 and A, B, C are 16-byte aligned.
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const bool vec = K % 4 == 0 && N % 4 == 0 && aligned(A) && aligned(B) && aligned(C);
  const dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
  if (vec)
    matmul_v3_register_blocking_kernel<true><<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
  else
    matmul_v3_register_blocking_kernel<false><<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)A; (void)B; (void)C; (void)K; (void)stream;
  // @end-solution
}
