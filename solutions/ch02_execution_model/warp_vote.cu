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
  // @begin-solution: Bits 0 to lane - 1 set, with lane = threadIdx.x % 32 (none for lane 0).
  return (1u << (threadIdx.x % 32)) - 1u;
  // @skeleton: return 0u;
  // @end-solution
}

// Reads this lane's element of each of the warp's kRows rows into values[] and votes on it:
// kept[r] is row r's ballot (bit l set when lane l keeps its element), the same in every
// lane. Returns how many elements the warp's slice keeps.
__device__ __forceinline__ int vote_rows(const int* __restrict__ in, int n, int threshold,
                                         int (&values)[kRows], unsigned (&kept)[kRows]) {
  // @begin-solution: The slice starts at blockIdx.x * kTile + (threadIdx.x / 32) * kRows * 32;
  // @hint: row r's element for this lane is 32 * r + lane further on (use long long: a tile
  // @hint: may end past 2^31). Every lane votes, with mask 0xffffffff (blockDim.x is a
  // @hint: multiple of 32), lanes past n with a false predicate. Add up __popc of each ballot.
  const long long first = static_cast<long long>(blockIdx.x) * kTile +
                          static_cast<long long>(threadIdx.x / 32) * (kRows * 32) +
                          threadIdx.x % 32;
  int total = 0;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const long long i = first + 32 * r;
    values[r] = i < n ? in[i] : 0;
    kept[r] = __ballot_sync(0xffffffffu, i < n && values[r] > threshold);
    total += __popc(kept[r]);
  }
  return total;
  // @skeleton: (void)in; (void)n; (void)threshold; (void)values; (void)kept;
  // @skeleton: return 0;
  // @end-solution
}

// Pass 1: tile_counts[b] = number of elements tile b keeps.
__global__ void __launch_bounds__(kThreads)
    count_tiles_kernel(const int* __restrict__ in, int n, int threshold,
                       int* __restrict__ tile_counts) {
  // @begin-solution: Each warp calls vote_rows; lane 0 puts the warp's count in a __shared__
  // @hint: array of kWarps ints; after __syncthreads() one thread adds them up and writes
  // @hint: tile_counts[blockIdx.x].
  __shared__ int warp_counts[kWarps];
  int values[kRows];
  unsigned kept[kRows];
  const int kept_by_warp = vote_rows(in, n, threshold, values, kept);
  if (threadIdx.x % 32 == 0) warp_counts[threadIdx.x / 32] = kept_by_warp;
  __syncthreads();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (int w = 0; w < kWarps; ++w) sum += warp_counts[w];
    tile_counts[blockIdx.x] = sum;
  }
  // @skeleton: (void)in; (void)n; (void)threshold; (void)tile_counts;
  // @end-solution
}

// Between the passes, one block of kScanThreads threads: counts[0, tiles) becomes its
// exclusive prefix sum in place (each tile's first place in out), and *total the sum of all.
__global__ void __launch_bounds__(kScanThreads)
    scan_tile_counts_kernel(int* __restrict__ counts, int tiles, int* __restrict__ total) {
  // @begin-solution: Walk the counts in chunks of blockDim.x. In each chunk, an inclusive scan
  // @hint: within each warp (__shfl_up_sync by 1, 2, 4, 8, 16, adding only where lane >= the
  // @hint: distance), the warps' totals scanned the same way by warp 0 through a __shared__
  // @hint: array, then counts[t] = carry + warps before + inclusive - own count; carry (the
  // @hint: sum of the earlier chunks) grows by the chunk's total. Mind the __syncthreads()
  // @hint: before the shared array is reused. Thread 0 writes *total at the end.
  __shared__ int warp_sums[kScanThreads / 32];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  int carry = 0;
  for (int start = 0; start < tiles; start += blockDim.x) {
    const int t = start + threadIdx.x;
    const int own = t < tiles ? counts[t] : 0;
    int inclusive = own;
    for (int d = 1; d < 32; d *= 2) {
      const int below = __shfl_up_sync(0xffffffffu, inclusive, d);
      if (lane >= d) inclusive += below;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
      int sum = lane < warps ? warp_sums[lane] : 0;
      for (int d = 1; d < 32; d *= 2) {
        const int below = __shfl_up_sync(0xffffffffu, sum, d);
        if (lane >= d) sum += below;
      }
      if (lane < warps) warp_sums[lane] = sum;  // now the sum of warps 0 to lane
    }
    __syncthreads();
    const int before = warp > 0 ? warp_sums[warp - 1] : 0;
    if (t < tiles) counts[t] = carry + before + inclusive - own;
    carry += warp_sums[warps - 1];
    __syncthreads();  // everyone has read warp_sums before the next chunk writes it
  }
  if (threadIdx.x == 0) *total = carry;
  // @skeleton: (void)counts; (void)tiles; (void)total;
  // @end-solution
}

// Pass 2: tile b's kept elements go to out[offsets[b]...], in the order of the input.
__global__ void __launch_bounds__(kThreads)
    scatter_tiles_kernel(const int* __restrict__ in, int n, int threshold,
                         const int* __restrict__ offsets, int* __restrict__ out) {
  // @begin-solution: vote_rows again, keeping values[] and kept[] in registers. Share the warp
  // @hint: counts through __shared__ memory as in pass 1; a warp's first place is
  // @hint: offsets[blockIdx.x] plus the counts of the warps before it. Then, row by row, a lane
  // @hint: whose bit is set in kept[r] writes its value at that place +
  // @hint: __popc(kept[r] & lanes_below()), and the place moves on by __popc(kept[r]).
  __shared__ int warp_counts[kWarps];
  int values[kRows];
  unsigned kept[kRows];
  const int kept_by_warp = vote_rows(in, n, threshold, values, kept);
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) warp_counts[warp] = kept_by_warp;
  __syncthreads();
  int place = offsets[blockIdx.x];
  for (int w = 0; w < warp; ++w) place += warp_counts[w];
  const unsigned below = lanes_below();
  const unsigned mine = below + 1u;  // this lane's own bit (1u << lane)
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    if (kept[r] & mine) out[place + __popc(kept[r] & below)] = values[r];
    place += __popc(kept[r]);
  }
  // @skeleton: (void)in; (void)n; (void)threshold; (void)offsets; (void)out;
  // @end-solution
}

void compact_if_greater(const int* in, int n, int threshold, int* out, int* count, int* scratch,
                        cudaStream_t stream) {
  // @begin-solution: When n <= 0, zero *count on the stream (cudaMemsetAsync) and return.
  // @hint: Otherwise, with tiles = ceil(n / kTile) (at most compact_scratch_ints(n) ints of
  // @hint: scratch), launch on `stream` count_tiles_kernel and scatter_tiles_kernel with one
  // @hint: block of kThreads per tile, and between them scan_tile_counts_kernel with one block
  // @hint: of kScanThreads, the counts in scratch and *count as its total. Check each launch.
  if (n <= 0) {
    CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(int), stream));
    return;
  }
  const int tiles = static_cast<int>((static_cast<long long>(n) + kTile - 1) / kTile);
  count_tiles_kernel<<<tiles, kThreads, 0, stream>>>(in, n, threshold, scratch);
  CUDA_CHECK_LAUNCH();
  scan_tile_counts_kernel<<<1, kScanThreads, 0, stream>>>(scratch, tiles, count);
  CUDA_CHECK_LAUNCH();
  scatter_tiles_kernel<<<tiles, kThreads, 0, stream>>>(in, n, threshold, scratch, out);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)n; (void)threshold; (void)out; (void)count; (void)scratch;
  // @skeleton: (void)stream;
  // @end-solution
}
