#include "matmul_v4_warp_tiling.h"

#include <cstddef>
#include <cstdint>

#include "course/check.h"

// Block tile of C: kBM x kBN, walked along k in steps of kBK, with two shared-memory stages of
// the A and B tiles so that the next step's tiles are loaded while this one is multiplied.
constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 8;
constexpr int kStages = 2;
// Warp tile: the 8 warps of a block sit 4 (down M) x 2 (across N), each owning kWM x kWN of C.
constexpr int kWM = 32;
constexpr int kWN = 64;
constexpr int kWarpsN = kBN / kWN;
constexpr int kThreads = (kBM / kWM) * kWarpsN * 32;  // 256
// Inside a warp tile, lanes sit kLanesM x kLanesN; each lane owns a kTM x kTN block of C in
// each of kSubM x kSubN sub-tiles (8x8 values in all). Sub-tiles keep a lane's four float4
// shared-memory reads per step of k contiguous across the warp, so they never conflict.
constexpr int kLanesM = 4;
constexpr int kLanesN = 8;
constexpr int kTM = 4;
constexpr int kTN = 4;
constexpr int kSubM = kWM / (kLanesM * kTM);  // 2
constexpr int kSubN = kWN / (kLanesN * kTN);  // 2
// A's tile is stored transposed (k-major); 4 floats of padding per row keep its transposing
// stores conflict-free and every row 16-byte aligned for float4 reads.
constexpr int kAPad = 4;

static_assert(kLanesM * kLanesN == 32, "a warp has 32 lanes");
static_assert(kSubM * kLanesM * kTM == kWM && kSubN * kLanesN * kTN == kWN, "warp tile shape");
// Each thread moves exactly one float4 of A's tile and one of B's per step of k.
static_assert(kBM * kBK == 4 * kThreads && kBK * kBN == 4 * kThreads, "one float4 per thread");

// How a kernel instance meets the matrices' edges. kFull: M, N multiples of the block tile, K
// of kBK, every pointer 16-byte aligned, so every float4 it touches is inside and no load or
// store needs a check (the predicate-free path that libraries take for interior tiles).
// kVec: cols a multiple of 4 and pointers aligned, so a float4 is wholly inside or wholly
// outside; kScalar: anything else, element by element.
enum class Edges { kFull, kVec, kScalar };

// The four floats m[r][c, c + 4) of a rows x cols row-major matrix, 0 where outside it.
template <Edges kEdges>
__device__ __forceinline__ float4 load4(const float* __restrict__ m, int rows, int cols, int r,
                                        int c) {
  // TODO: kFull: one float4 load of m[r * cols + c] (index as std::size_t: M * K
  //       may not fit an int), no checks. Otherwise zeros when r >= rows; with kVec one
  //       float4 load when c < cols; with kScalar a scalar load for each of the four with
  //       c + i < cols, so an edge tile reads nothing outside the matrix.
  (void)m; (void)rows; (void)cols; (void)r; (void)c;
  return make_float4(0.f, 0.f, 0.f, 0.f);
}

// Writes v to m[r][c, c + 4) of a rows x cols row-major matrix, dropping what falls outside it
// (kEdges as for load4).
template <Edges kEdges>
__device__ __forceinline__ void store4(float* __restrict__ m, int rows, int cols, int r, int c,
                                       float4 v) {
  // TODO: The mirror of load4: kFull one float4 store, no checks; otherwise
  //       nothing when r >= rows; with kVec one float4 store when c < cols, with kScalar one
  //       scalar store for each c + i < cols.
  (void)m; (void)rows; (void)cols; (void)r; (void)c; (void)v;
}

// Two blocks per SM: the 8x8 accumulators and the staged float4s fit in 128 registers.
template <Edges kEdges>
__global__ void __launch_bounds__(kThreads, 2)
    matmul_v4_warp_tiling_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K) {
  // TODO: Declare kStages copies of a_tile[kBK][kBM + kAPad] (A transposed) and
  //       b_tile[kBK][kBN] in shared memory. Each thread stages one float4 of A's tile (row
  //       tid / 2, k offset (tid % 2) * 4) and one of B's (row tid / 32, column
  //       (tid % 32) * 4), read with load4. Fill stage 0, __syncthreads(); then per step of
  //       k: unless it is the last, load4 the next step's two float4s into registers;
  //       multiply the current stage; store the registers into the other stage (again
  //       unless last), and __syncthreads() once. Lane l of
  //       warp w owns rows (w / kWarpsN) * kWM + (l / kLanesN) * kTM + [0, kTM) and the same
  //       + kWM / kSubM, columns (w % kWarpsN) * kWN + (l % kLanesN) * kTN + [0, kTN) and
  //       the same + kWN / kSubN: per k, four float4 reads and 64 multiply-adds into
  //       float acc[8][8]. Finally store4 acc to C.
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;
}

void matmul_v4_warp_tiling(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  // TODO: One block of kThreads threads per kBM x kBN tile of C (grid.x over N,
  //       grid.y over M, rounded up), on `stream`, then CUDA_CHECK_LAUNCH(). kVec only when
  //       K % 4 == 0, N % 4 == 0 and A, B, C are 16-byte aligned; kFull when, besides,
  //       K > 0, M % kBM == 0, N % kBN == 0 and K % kBK == 0; kScalar otherwise.
  (void)A; (void)B; (void)C; (void)K; (void)stream;
}
