#include "matmul_v5_async_copy.h"

#include <cuda_pipeline.h>

#include <cstddef>
#include <cstdint>

#include "course/check.h"

// The shape of the work, as template parameters so that a tuning sweep can instantiate several
// and the chosen one is the single `using Config` line below.
//
// Block tile of C: kBM x kBN, walked along k in tiles of kBK through kStages shared-memory
// stages: while the block multiplies one tile, the copies of the next kStages - 1 are in
// flight. The warps of a block sit kWarpsM x kWarpsN; inside a warp tile the 32 lanes sit
// kLanesM x kLanesN, and each lane owns kTM rows x kTN columns of C in registers, as rung 4's
// sub-tiles: rows in runs of 4, 16 apart; columns in runs of 4, 32 apart. kMinBlocks is the
// blocks per SM asked of the compiler (__launch_bounds__): 1 lets a 256-thread block use up to
// 255 registers, which a 8x16 block of C per thread needs.
template <int BM, int BN, int BK, int TM, int TN, int Stages, int MinBlocks>
struct Tiling {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kTM = TM, kTN = TN;
  static constexpr int kStages = Stages, kMinBlocks = MinBlocks;
  static constexpr int kLanesM = 4, kLanesN = 8;
  static constexpr int kWM = kLanesM * TM, kWN = kLanesN * TN;
  static constexpr int kWarpsM = BM / kWM, kWarpsN = BN / kWN;
  static constexpr int kWarps = kWarpsM * kWarpsN, kThreads = kWarps * 32;
  // Floats per stage: A's tile k-major, [kBK][kBM] (swizzled, see the kernel); B's tile as it
  // lies in global memory, [kBK][kBN].
  static constexpr int kAStage = BK * BM, kBStage = BK * BN;
  static constexpr int kSmemBytes =
      Stages * (kAStage + kBStage) * static_cast<int>(sizeof(float));
  // Per thread and tile: 4-byte copies of A, 16-byte chunks of B.
  static constexpr int kAElems = BM * BK / kThreads;
  static constexpr int kBChunks = BK * BN / 4 / kThreads;

  static_assert(kLanesM * kLanesN == 32, "a warp has 32 lanes");
  static_assert(BM % kWM == 0 && BN % kWN == 0, "the warp tiles cover the block tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4");
  static_assert(Stages >= 2, "at least double buffering");
  // A warp's copy of A covers 4 rows x 8 values of k (below): whole 8-deep slices of the tile,
  // shared evenly by the warps, each warp's rows a whole 32-row band.
  static_assert(BK % 8 == 0 && BM % 32 == 0 && kWarps % 8 == 0 && (BM / 4) % kWarps == 0 &&
                    kAElems * kThreads == BM * BK, "A's copies split evenly");
  static_assert(kBChunks * 4 * kThreads == BK * BN && kThreads % (BN / 4) == 0,
                "B's 16-byte chunks split evenly, each thread's in one column");
};

// The configuration this file compiles: the fastest of build/sweep's on an H100 and an H200
// (2026-11-27): 128x256x32 tiles, 8x16 per thread, two stages, 0.94 of cuBLAS at 4096^3.
using Config = Tiling<128, 256, 32, 8, 16, 2, 1>;

// How a kernel instance meets the matrices' edges (as in rung 4). kFull: M, N multiples of the
// block tile, K of kBK, B and C 16-byte aligned, so no copy or store needs a check. kVec: N a
// multiple of 4 and B, C aligned, so a 16-byte chunk of B or C is wholly inside or wholly
// outside; kScalar: anything else, element by element. A is copied 4 bytes at a time in every
// case (see the kernel), so its shape and alignment do not matter.
enum class Edges { kFull, kVec, kScalar };

// --- cp.async, through the pipeline primitives ------------------------------------------
// __pipeline_memcpy_async(dst, src, size, zfill) from <cuda_pipeline.h> rather than
// cuda::memcpy_async, for two things the latter does not give: the zero-fill operand (the
// last zfill of the size bytes are not read but written as zeros: with zfill = size an
// element or chunk outside the matrix becomes zeros without a branch or a separate store, so
// the copies alone write every byte of a stage), and commit/wait groups with no pipeline object
// (__pipeline_commit, __pipeline_wait_prior). A 16-byte copy is cp.async.cg (it bypasses L1:
// every byte is used once, from shared memory, so caching it in L1 only evicts), a 4-byte one
// cp.async.ca (the only form of that size). Each copy compiles to one LDGSTS, what the
// technique rule looks for; a commit to LDGDEPBAR, a wait to DEPBAR. (Inline PTX would say
// the same, but the course refuses inline assembly.)

// Stages one float of A: *src when `inside`, else 0 (`base`: any address of the matrix, which a
// zero-fill does not read).
template <Edges kEdges>
__device__ __forceinline__ void copy1(float* dst, const float* src, bool inside,
                                      const float* base) {
  // TODO: kFull: __pipeline_memcpy_async(dst, src, 4), no check. Otherwise
  //       __pipeline_memcpy_async(dst, inside ? src : base, 4, inside ? 0 : 4).
  (void)dst; (void)src; (void)inside; (void)base;
}

// Stages src[0, 4) of a row of B into dst[0, 4): src is element (r, c) of a matrix with `cols`
// columns, `row_inside` says whether r is one of its rows; zeros where outside the matrix.
template <Edges kEdges>
__device__ __forceinline__ void copy4(float* dst, const float* src, bool row_inside, int c,
                                      int cols, const float* base) {
  // TODO: kFull: __pipeline_memcpy_async(dst, src, 16), no checks. kVec: the same
  //       when row_inside and c < cols, else (base, zfill 16: zeros). kScalar: four 4-byte
  //       copies, element c + i read when row_inside and c + i < cols, else zero-filled.
  (void)dst; (void)src; (void)row_inside; (void)c; (void)cols; (void)base;
}

// Writes v to m[r][c, c + 4) of a rows x cols row-major matrix, dropping what falls outside it.
template <Edges kEdges>
__device__ __forceinline__ void store4(float* __restrict__ m, int rows, int cols, int r, int c,
                                       float4 v) {
  // TODO: As in rung 4: kFull one float4 store, no checks; otherwise nothing when
  //       r >= rows; with kVec one float4 store when c < cols, with kScalar one scalar store
  //       for each c + i < cols.
  (void)m; (void)rows; (void)cols; (void)r; (void)c; (void)v;
}

// A's tile is k-major, element (m, k) of the tile at a_tile[k * kBM + swizzle(m, k)], with
// swizzle(m, k) = m ^ ((k % 8) * 4): the XOR moves whole groups of four floats (bits 2-4 of m),
// so a lane's four rows m .. m + 3 (m a multiple of 4) stay one aligned float4.
//
// Why k-major, and why this swizzle. The inner loop wants, per value of k, a lane's rows of A
// as float4s (rung 4's 2 + 4 shared reads per 128 multiply-adds). In global memory A is
// m-major (a row holds its values of k), and a cp.async copies bytes as they are: it cannot
// transpose. So A is copied 4 bytes at a time, each float to its k-major place: a warp's copy
// instruction takes 4 rows x 8 values of k, that is 4 full 32-byte sectors of global memory,
// and writes 32 floats whose banks are (m ^ (k * 4)) % 32 for m = 4 rows (bits 0-1) and 8
// values of k (bits 2-4): 32 different banks, one pass. Without the swizzle, the 8 values of k
// would sit kBM floats apart, all in the same bank group: 8-way conflicts on every copy. The
// reads are conflict-free too: a warp reads, for one k, four float4s of four consecutive row
// groups (the 8 lanes of a lane row read the same one: a broadcast), and XOR with one k keeps
// four different groups different.
//
// The alternative measured (build/sweep, 2026-11-27): keep A m-major, 16-byte copies into rows
// padded to kBK + 4 floats (rows 4 apart then fall in different bank groups), and read a
// lane's rows as float4 along k, four values of k per read. It is conflict-free too, but a
// lane then holds kTM float4s of A at once and the compiler cannot overlap the next reads with
// the arithmetic: 0.80-0.85 of cuBLAS against this layout's 0.87-0.94.
template <class T, Edges kEdges>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    matmul_v5_async_copy_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int M, int N, int K) {
  // TODO: a_tiles (kStages x kAStage floats) and b_tiles (kStages x kBStage) carved
  //       from extern __shared__ memory. Per tile, thread (warp w, lane l) copies floats of A
  //       p = 0 .. kAElems - 1: row ((p * kWarps) % (kBM / 4)) * 4 + w * 4 + l % 4 of the
  //       tile, k = ((p * kWarps) / (kBM / 4)) * 8 + l / 4, to a_tile[k * kBM + (row ^
  //       ((k % 8) * 4))] (copy1); and 16-byte chunks of B p = 0 .. kBChunks - 1: row
  //       tid / (kBN / 4) + p * (kThreads / (kBN / 4)), column (tid % (kBN / 4)) * 4 (copy4).
  //       Prologue: tiles 0 .. kStages - 2, one commit each (also when there is no such
  //       tile: the group count stays uniform). Per tile t: __pipeline_wait_prior(kStages - 2)
  //       (this thread's copies of t have landed), __syncthreads() (everyone's have, and
  //       everyone is done with tile t - 1), copy tile t + kStages - 1 into the stage t - 1
  //       used, commit, multiply tile t. Lane l of warp w owns rows (w / kWarpsN) * kWM +
  //       (l / kLanesN) * 4 + 16 * s + [0, 4) (s < kTM / 4) and columns (w % kWarpsN) * kWN
  //       + (l % kLanesN) * 4 + 32 * j + [0, 4) (j < kTN / 4): per k, float4 reads of A
  //       (swizzled) and B, then kTM x kTN multiply-adds. Finally store4 the accumulators.
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;
}

// One launch of the kernel for tiling T, its edges chosen from the shapes and pointers.
template <class T>
void launch_matmul_v5(const float* A, const float* B, float* C, int M, int N, int K,
                      cudaStream_t stream) {
  // TODO: One block of T::kThreads per kBM x kBN tile of C (grid.x over N, grid.y
  //       over M, rounded up) with T::kSmemBytes of dynamic shared memory, on `stream`, then
  //       CUDA_CHECK_LAUNCH(). Above 48 KiB a kernel must opt in first, once per
  //       instantiation: cudaFuncSetAttribute(kernel,
  //       cudaFuncAttributeMaxDynamicSharedMemorySize, bytes). kVec when N % 4 == 0 and B and
  //       C are 16-byte aligned; kFull when, besides, K > 0, M % kBM == 0, N % kBN == 0 and
  //       K % kBK == 0; kScalar otherwise.
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
}

void matmul_v5_async_copy(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  launch_matmul_v5<Config>(A, B, C, M, N, K, stream);
}
