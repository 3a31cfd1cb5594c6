#include "warp_vote.h"

#include "course/check.h"

// The input is cut into tiles of kTile elements, one per block. Within a tile each warp owns
// kRows consecutive rows of 32 elements: the warps' slices follow each other in the order of
// the input, and so do the rows of a slice and the lanes of a row. Every lane reads one
// element per row, so each row is one coalesced 128-byte load.
constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kRows = 8;
constexpr int kTile = kWarps * kRows * 32;
constexpr int kScanThreads = 1024;
static_assert(kTile >= 32, "compact_scratch_ints(n) has room for one count per tile only for "
                           "tiles of 32 elements or more");

// The lanes below this one, as a bit mask (what PTX calls %lanemask_lt): a kept lane's place
// in its row is the number of kept lanes in this mask.
__device__ __forceinline__ unsigned lanes_below() {
  // TODO: Bits 0 to lane - 1 set, with lane = threadIdx.x % 32 (none for lane 0).
  return 0u;
}

// Reads this lane's element of each of the warp's kRows rows into values[] and votes on it:
// kept[r] is row r's ballot (bit l set when lane l keeps its element), the same in every
// lane. Returns how many elements the warp's slice keeps.
__device__ __forceinline__ int vote_rows(const int* __restrict__ in, int n, int threshold,
                                         int (&values)[kRows], unsigned (&kept)[kRows]) {
  // TODO: The slice starts at blockIdx.x * kTile + (threadIdx.x / 32) * kRows * 32;
  //       row r's element for this lane is 32 * r + lane further on (use long long: a tile
  //       may end past 2^31). Every lane votes, with mask 0xffffffff (blockDim.x is a
  //       multiple of 32), lanes past n with a false predicate. Add up __popc of each ballot.
  (void)in; (void)n; (void)threshold; (void)values; (void)kept;
  return 0;
}

// Pass 1: tile_counts[b] = number of elements tile b keeps.
__global__ void __launch_bounds__(kThreads)
    count_tiles_kernel(const int* __restrict__ in, int n, int threshold,
                       int* __restrict__ tile_counts) {
  // TODO: Each warp calls vote_rows; lane 0 puts the warp's count in a __shared__
  //       array of kWarps ints; after __syncthreads() one thread adds them up and writes
  //       tile_counts[blockIdx.x].
  (void)in; (void)n; (void)threshold; (void)tile_counts;
}

// Between the passes, one block of kScanThreads threads: counts[0, tiles) becomes its
// exclusive prefix sum in place (each tile's first place in out), and *total the sum of all.
__global__ void __launch_bounds__(kScanThreads)
    scan_tile_counts_kernel(int* __restrict__ counts, int tiles, int* __restrict__ total) {
  // TODO: Walk the counts in chunks of blockDim.x. In each chunk, an inclusive scan
  //       within each warp (__shfl_up_sync by 1, 2, 4, 8, 16, adding only where lane >= the
  //       distance), the warps' totals scanned the same way by warp 0 through a __shared__
  //       array, then counts[t] = carry + warps before + inclusive - own count; carry (the
  //       sum of the earlier chunks) grows by the chunk's total. Mind the __syncthreads()
  //       before the shared array is reused. Thread 0 writes *total at the end.
  (void)counts; (void)tiles; (void)total;
}

// Pass 2: tile b's kept elements go to out[offsets[b]...], in the order of the input.
__global__ void __launch_bounds__(kThreads)
    scatter_tiles_kernel(const int* __restrict__ in, int n, int threshold,
                         const int* __restrict__ offsets, int* __restrict__ out) {
  // TODO: vote_rows again, keeping values[] and kept[] in registers. Share the warp
  //       counts through __shared__ memory as in pass 1; a warp's first place is
  //       offsets[blockIdx.x] plus the counts of the warps before it. Then, row by row, a lane
  //       whose bit is set in kept[r] writes its value at that place +
  //       __popc(kept[r] & lanes_below()), and the place moves on by __popc(kept[r]).
  (void)in; (void)n; (void)threshold; (void)offsets; (void)out;
}

void compact_if_greater(const int* in, int n, int threshold, int* out, int* count, int* scratch,
                        cudaStream_t stream) {
  // TODO: When n <= 0, zero *count on the stream (cudaMemsetAsync) and return.
  //       Otherwise, with tiles = ceil(n / kTile) (at most compact_scratch_ints(n) ints of
  //       scratch), launch on `stream` count_tiles_kernel and scatter_tiles_kernel with one
  //       block of kThreads per tile, and between them scan_tile_counts_kernel with one block
  //       of kScanThreads, the counts in scratch and *count as its total. Check each launch.
  (void)in; (void)n; (void)threshold; (void)out; (void)count; (void)scratch;
  (void)stream;
}
