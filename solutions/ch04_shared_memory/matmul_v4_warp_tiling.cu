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
  // @begin-solution: kFull: one float4 load of m[r * cols + c] (index as std::size_t: M * K
  // @hint: may not fit an int), no checks. Otherwise zeros when r >= rows; with kVec one
  // @hint: float4 load when c < cols; with kScalar a scalar load for each of the four with
  // @hint: c + i < cols, so an edge tile reads nothing outside the matrix.
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if constexpr (kEdges == Edges::kFull)
    return *reinterpret_cast<const float4*>(m + static_cast<std::size_t>(r) * cols + c);
  if (r >= rows) return v;
  const float* row = m + static_cast<std::size_t>(r) * cols;
  if constexpr (kEdges == Edges::kVec) {
    if (c < cols) v = *reinterpret_cast<const float4*>(row + c);
  } else {
    if (c + 0 < cols) v.x = row[c + 0];
    if (c + 1 < cols) v.y = row[c + 1];
    if (c + 2 < cols) v.z = row[c + 2];
    if (c + 3 < cols) v.w = row[c + 3];
  }
  return v;
  // @skeleton: (void)m; (void)rows; (void)cols; (void)r; (void)c;
  // @skeleton: return make_float4(0.f, 0.f, 0.f, 0.f);
  // @end-solution
}

// Writes v to m[r][c, c + 4) of a rows x cols row-major matrix, dropping what falls outside it
// (kEdges as for load4).
template <Edges kEdges>
__device__ __forceinline__ void store4(float* __restrict__ m, int rows, int cols, int r, int c,
                                       float4 v) {
  // @begin-solution: The mirror of load4: kFull one float4 store, no checks; otherwise
  // @hint: nothing when r >= rows; with kVec one float4 store when c < cols, with kScalar one
  // @hint: scalar store for each c + i < cols.
  if constexpr (kEdges == Edges::kFull) {
    *reinterpret_cast<float4*>(m + static_cast<std::size_t>(r) * cols + c) = v;
    return;
  }
  if (r >= rows) return;
  float* row = m + static_cast<std::size_t>(r) * cols;
  if constexpr (kEdges == Edges::kVec) {
    if (c < cols) *reinterpret_cast<float4*>(row + c) = v;
  } else {
    if (c + 0 < cols) row[c + 0] = v.x;
    if (c + 1 < cols) row[c + 1] = v.y;
    if (c + 2 < cols) row[c + 2] = v.z;
    if (c + 3 < cols) row[c + 3] = v.w;
  }
  // @skeleton: (void)m; (void)rows; (void)cols; (void)r; (void)c; (void)v;
  // @end-solution
}

// Two blocks per SM: the 8x8 accumulators and the staged float4s fit in 128 registers.
template <Edges kEdges>
__global__ void __launch_bounds__(kThreads, 2)
    matmul_v4_warp_tiling_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                 float* __restrict__ C, int M, int N, int K) {
  // @begin-solution: Declare kStages copies of a_tile[kBK][kBM + kAPad] (A transposed) and
  // @hint: b_tile[kBK][kBN] in shared memory. Each thread stages one float4 of A's tile (row
  // @hint: tid / 2, k offset (tid % 2) * 4) and one of B's (row tid / 32, column
  // @hint: (tid % 32) * 4), read with load4. Fill stage 0, __syncthreads(); then per step of
  // @hint: k: unless it is the last, load4 the next step's two float4s into registers;
  // @hint: multiply the current stage; store the registers into the other stage (again
  // @hint: unless last), and __syncthreads() once. Lane l of
  // @hint: warp w owns rows (w / kWarpsN) * kWM + (l / kLanesN) * kTM + [0, kTM) and the same
  // @hint: + kWM / kSubM, columns (w % kWarpsN) * kWN + (l % kLanesN) * kTN + [0, kTN) and
  // @hint: the same + kWN / kSubN: per k, four float4 reads and 64 multiply-adds into
  // @hint: float acc[8][8]. Finally store4 acc to C.
  __shared__ __align__(16) float a_tile[kStages][kBK][kBM + kAPad];
  __shared__ __align__(16) float b_tile[kStages][kBK][kBN];

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  // This lane's first row and column of C inside the block tile; sub-tiles follow at strides
  // kWM / kSubM and kWN / kSubN.
  const int frag_m = (warp / kWarpsN) * kWM + (lane / kLanesN) * kTM;
  const int frag_n = (warp % kWarpsN) * kWN + (lane % kLanesN) * kTN;
  // The float4 this thread stages: of A, row a_m of the tile at k offset a_k; of B, row b_k
  // at column b_n. A warp reads 16 rows x 32 bytes of A and one 512-byte row of B.
  const int a_m = tid / (kBK / 4), a_k = (tid % (kBK / 4)) * 4;
  const int b_k = tid / (kBN / 4), b_n = (tid % (kBN / 4)) * 4;
  const int block_m = blockIdx.y * kBM;
  const int block_n = blockIdx.x * kBN;

  // Transposing A's float4 into four k-rows: a warp's 32 stores of one k-row hit 32 banks.
  const auto stage = [&](int s, float4 a, float4 b) {
    a_tile[s][a_k + 0][a_m] = a.x;
    a_tile[s][a_k + 1][a_m] = a.y;
    a_tile[s][a_k + 2][a_m] = a.z;
    a_tile[s][a_k + 3][a_m] = a.w;
    *reinterpret_cast<float4*>(&b_tile[s][b_k][b_n]) = b;
  };

  float acc[kSubM * kTM][kSubN * kTN] = {};

  // Zero-filled past K except for kFull (which the launcher picks only when K > 0), so a K of
  // 0 stages zeros, the loop below never runs and C is written with zeros.
  stage(0, load4<kEdges>(A, M, K, block_m + a_m, a_k),
        load4<kEdges>(B, K, N, b_k, block_n + b_n));
  __syncthreads();

  int s = 0;
  for (int k0 = 0; k0 < K; k0 += kBK, s ^= 1) {
    // The next step's float4s, issued before the arithmetic so that their latency hides
    // behind it; none after the last step (kFull's loads have no check to stop them).
    const bool last = k0 + kBK >= K;
    float4 a_next, b_next;
    if (!last) {
      a_next = load4<kEdges>(A, M, K, block_m + a_m, k0 + kBK + a_k);
      b_next = load4<kEdges>(B, K, N, k0 + kBK + b_k, block_n + b_n);
    }

#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      // A warp reads 4 distinct float4s of a_tile[s][k] and 8 of b_tile[s][k], each run
      // contiguous (the rest broadcast): no bank conflicts.
      __align__(16) float a[kSubM * kTM];
      __align__(16) float b[kSubN * kTN];
#pragma unroll
      for (int sm = 0; sm < kSubM; ++sm)
        *reinterpret_cast<float4*>(&a[sm * kTM]) =
            *reinterpret_cast<const float4*>(&a_tile[s][k][frag_m + sm * (kWM / kSubM)]);
#pragma unroll
      for (int sn = 0; sn < kSubN; ++sn)
        *reinterpret_cast<float4*>(&b[sn * kTN]) =
            *reinterpret_cast<const float4*>(&b_tile[s][k][frag_n + sn * (kWN / kSubN)]);
#pragma unroll
      for (int i = 0; i < kSubM * kTM; ++i)
#pragma unroll
        for (int j = 0; j < kSubN * kTN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }

    // Stage s ^ 1 was last read in the previous step, before that step's barrier, so it may
    // be overwritten now; this step's barrier publishes it and frees stage s for the next.
    if (!last) stage(s ^ 1, a_next, b_next);
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < kSubM * kTM; ++i) {
    const int r = block_m + frag_m + (i / kTM) * (kWM / kSubM) + i % kTM;
#pragma unroll
    for (int sn = 0; sn < kSubN; ++sn) {
      const float* v = &acc[i][sn * kTN];
      store4<kEdges>(C, M, N, r, block_n + frag_n + sn * (kWN / kSubN),
                   make_float4(v[0], v[1], v[2], v[3]));
    }
  }
  // @skeleton: (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;
  // @end-solution
}

void matmul_v4_warp_tiling(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  // @begin-solution: One block of kThreads threads per kBM x kBN tile of C (grid.x over N,
  // @hint: grid.y over M, rounded up), on `stream`, then CUDA_CHECK_LAUNCH(). kVec only when
  // @hint: K % 4 == 0, N % 4 == 0 and A, B, C are 16-byte aligned; kFull when, besides,
  // @hint: K > 0, M % kBM == 0, N % kBN == 0 and K % kBK == 0; kScalar otherwise.
  const auto address = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  const bool vec = K % 4 == 0 && N % 4 == 0 && (address(A) | address(B) | address(C)) % 16 == 0;
  const bool full = vec && K > 0 && M % kBM == 0 && N % kBN == 0 && K % kBK == 0;
  const auto kernel = full  ? matmul_v4_warp_tiling_kernel<Edges::kFull>
                      : vec ? matmul_v4_warp_tiling_kernel<Edges::kVec>
                            : matmul_v4_warp_tiling_kernel<Edges::kScalar>;
  const dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
  kernel<<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)A; (void)B; (void)C; (void)K; (void)stream;
  // @end-solution
}
