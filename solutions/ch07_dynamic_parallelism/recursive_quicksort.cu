#include "recursive_quicksort.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"

// Given: the shapes of the three kernels.
constexpr int kPartitionThreads = 256;
constexpr int kKeysPerThread = 8;
constexpr unsigned kPartitionTile = kPartitionThreads * kKeysPerThread;  // keys per block
constexpr int kSortThreads = 1024;
constexpr unsigned kSortChunk = 4096;  // keys one block sorts in shared memory at a time

// Given: where one call's keys live, the same for every grid of the call. The partitions
// ping-pong between out and spare over the same index ranges: a partition reads its segment
// from one and writes its two sides into the other, where its children read them.
struct SortPlan {
  int* out;            // keys_out: the == runs and the sorted segments end here
  int* spare;          // the first n ints of scratch: the other buffer of the ping-pong
  unsigned* counters;  // the rest of scratch: three per key index (see partition_kernel)
  int max_depth;       // params.max_depth, clamped to a sane bound (the header says why)
  unsigned leaf_size;
};

// Given: a segment for a grid to partition: its keys are src[lo, lo + len), its two sides go
// to dst[lo, lo + len), and it sits `depth` partitions below the whole array.
struct Segment {
  const int* src;
  int* dst;
  unsigned lo;
  unsigned len;
  int depth;
};

// Given: the smallest power of two >= len.
__host__ __device__ inline unsigned padded_size(unsigned len) {
  unsigned padded = 1;
  while (padded < len) padded *= 2;
  return padded;
}

// Given: threads for a block_sort_kernel launch: one per comparator of a chunk's network.
__host__ __device__ inline unsigned sort_threads(unsigned len) {
  const unsigned pairs = padded_size(len < kSortChunk ? len : kSortChunk) / 2;
  return pairs < 32 ? 32 : (pairs > kSortThreads ? kSortThreads : pairs);
}

// Given: blocks for a partition_kernel launch over len keys.
__host__ __device__ inline unsigned partition_blocks(unsigned len) {
  return (len + kPartitionTile - 1) / kPartitionTile;
}

// Given: one step of a bitonic sorting network over keys[0, len), as if padded to `padded`
// keys (a power of two) with +infinity. Every comparator puts the smaller key at the lower
// index, so one that reaches past len would never move anything, and is skipped. The step
// works in aligned groups of `span` keys: a `flip` step (the first of each merge) compares
// each key of the first half with its mirror in the second, the others compare keys span / 2
// apart.
__device__ void bitonic_step(int* keys, unsigned len, unsigned padded, unsigned span,
                             bool flip) {
  const unsigned half = span / 2;
  for (unsigned pair = threadIdx.x; pair < padded / 2; pair += blockDim.x) {
    const unsigned offset = pair & (half - 1);  // spans are powers of two: no division
    const unsigned group = (pair - offset) * 2;
    const unsigned i = group + offset;
    const unsigned j = flip ? group + span - 1 - offset : i + half;
    if (j < len) {
      const int a = keys[i];
      const int b = keys[j];
      if (a > b) {
        keys[i] = b;
        keys[j] = a;
      }
    }
  }
  __syncthreads();
}

// Given: sorts the block's chunk[0, len), len <= kSortChunk: merges of growing spans.
__device__ void bitonic_sort_chunk(int* chunk, unsigned len) {
  const unsigned padded = padded_size(len);
  for (unsigned span = 2; span <= padded; span *= 2) {
    bitonic_step(chunk, len, padded, span, true);
    for (unsigned s = span / 2; s >= 2; s /= 2) bitonic_step(chunk, len, padded, s, false);
  }
}

// Given: one block sorts src[lo, lo + len) into out[lo, lo + len) (src may be out), for any
// len. Up to kSortChunk keys it is one bitonic sort in shared memory. A longer segment (one
// that reached max_depth, or a leaf_size above kSortChunk) is sorted chunk by chunk in shared
// memory, then merged in out by the network's wider steps, each chunk reloaded for the narrow
// steps that end every merge: correct for any length, but one block does all of it.
__global__ void __launch_bounds__(kSortThreads)
    block_sort_kernel(const int* src, int* out, unsigned lo, unsigned len) {
  __shared__ int chunk[kSortChunk];
  const unsigned chunks = (len + kSortChunk - 1) / kSortChunk;
  for (unsigned c = 0; c < chunks; ++c) {
    const unsigned start = lo + c * kSortChunk;
    const unsigned count = min(kSortChunk, len - c * kSortChunk);
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) chunk[i] = src[start + i];
    __syncthreads();
    bitonic_sort_chunk(chunk, count);
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) out[start + i] = chunk[i];
    __syncthreads();
  }
  int* keys = out + lo;
  const unsigned padded = padded_size(len);
  for (unsigned span = 2 * kSortChunk; span <= padded; span *= 2) {
    bitonic_step(keys, len, padded, span, true);
    for (unsigned s = span / 2; s > kSortChunk; s /= 2) bitonic_step(keys, len, padded, s, false);
    for (unsigned c = 0; c < chunks; ++c) {
      const unsigned start = c * kSortChunk;
      const unsigned count = min(kSortChunk, len - start);
      for (unsigned i = threadIdx.x; i < count; i += blockDim.x) chunk[i] = keys[start + i];
      __syncthreads();
      for (unsigned s = kSortChunk; s >= 2; s /= 2)
        bitonic_step(chunk, count, padded_size(count), s, false);
      for (unsigned i = threadIdx.x; i < count; i += blockDim.x) keys[start + i] = chunk[i];
      __syncthreads();
    }
  }
}

// Given: out[0, count) = value, for the run of keys equal to a pivot.
__global__ void fill_kernel(int* out, unsigned count, int value) {
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) out[i] = value;
}

// @begin-solution: Constants of your own: how deep the recursion may go (the clamp for
// @hint: params.max_depth), and whatever your partition needs.
// The deepest depth the recursion goes to, whatever params say: it keeps the chain of
// dependent launches short (each level waits about 11 us for its launch, and nothing on the
// device stops a runaway recursion) and prepare's count of pending launches bounded; two
// levels within the course's bound kMaxLaunchNesting (recursive_quicksort.h says where 24
// comes from).
constexpr int kDeepestDepth = kMaxLaunchNesting - 2;
// Longer == runs get a grid of their own; shorter ones the partition's last block writes.
constexpr unsigned kFillByBlock = 1u << 16;
constexpr unsigned kFullWarp = 0xffffffffu;
// @end-solution

__global__ void __launch_bounds__(kPartitionThreads) partition_kernel(SortPlan plan, Segment seg);

// The pivot of keys[0, len), len >= 2.
__device__ int pivot_of(const int* keys, unsigned len) {
  // @begin-solution: Any key of the segment works (the == run then holds at least one key,
  // @hint: so both sides shrink), but the pivot decides how deep the recursion goes: the
  // @hint: median of three keys is the usual choice. Take them a quarter, half and three
  // @hint: quarters of the way in, not first/middle/last: an organ-pipe input (up, then down)
  // @hint: has its smallest keys at both ends, so first/middle/last picks the minimum and
  // @hint: each level peels off two keys. median(a, b, c) = max(min(a, b), min(max(a, b), c)).
  const int a = keys[len / 4];
  const int b = keys[len / 2];
  const int c = keys[len - 1 - len / 4];
  return max(min(a, b), min(max(a, b), c));
  // @skeleton: (void)len;
  // @skeleton: return keys[0];
  // @end-solution
}

// Called by one thread of a finished partition: sorts keys[lo, lo + len), one side of it, at
// `depth`, writing a partition's sides to next_dst.
__device__ void sort_side(const SortPlan& plan, const int* keys, int* next_dst, unsigned lo,
                          unsigned len, int depth) {
  // @begin-solution: Nothing to do for 0 keys; 1 key is copied to plan.out[lo] right here (a
  // @hint: launch costs far more). A side of at most plan.leaf_size keys, or at depth
  // @hint: plan.max_depth, goes to ONE block: block_sort_kernel<<<1, sort_threads(len), 0,
  // @hint: cudaStreamFireAndForget>>>(keys, plan.out, lo, len). Any other side is partitioned
  // @hint: in turn: zero its three counters (plan.counters + 3 * lo) BEFORE the launch (the
  // @hint: child sees what this thread wrote before launching it), then
  // @hint: partition_kernel<<<partition_blocks(len), kPartitionThreads, 0,
  // @hint: cudaStreamFireAndForget>>>(plan, {keys, next_dst, lo, len, depth}).
  // @hint: Fire-and-forget: the two sides may run at once, independently, and nobody waits
  // @hint: for them (nothing may: a child is only guaranteed to start once the grid that
  // @hint: launched it has ended). A failed launch (a bad configuration, too many launches
  // @hint: pending, the device out of memory) returns its error to this thread only
  // @hint: (cudaGetLastError() right after it), never to the host: its side just stays
  // @hint: unsorted.
  if (len == 0) return;
  if (len == 1) {
    plan.out[lo] = keys[lo];
    return;
  }
  if (len <= plan.leaf_size || depth >= plan.max_depth) {
    block_sort_kernel<<<1, sort_threads(len), 0, cudaStreamFireAndForget>>>(keys, plan.out, lo,
                                                                          len);
    return;
  }
  // This side starts where its parent or its sibling kept counters, and both are done with
  // them: the parent read them, the sibling's range starts elsewhere.
  unsigned* counters = plan.counters + 3 * static_cast<std::size_t>(lo);
  counters[0] = 0;
  counters[1] = 0;
  counters[2] = 0;
  partition_kernel<<<partition_blocks(len), kPartitionThreads, 0, cudaStreamFireAndForget>>>(
      plan, Segment{keys, next_dst, lo, len, depth});
  // @skeleton: (void)plan; (void)keys; (void)next_dst; (void)lo; (void)len; (void)depth;
  // @end-solution
}

// One grid partitions seg, each block a tile of kPartitionTile keys; its last block to finish
// launches the two sides.
__global__ void __launch_bounds__(kPartitionThreads) partition_kernel(SortPlan plan,
                                                                      Segment seg) {
  // @begin-solution: Three-way partition of seg.src[lo, lo + len) around pivot_of(...),
  // @hint: which every block computes alike. The segment's counters are
  // @hint: plan.counters[3 * lo + 0, 1, 2]: keys below the pivot reserved so far, keys above,
  // @hint: blocks finished (the launcher zeroed them).
  // @hint: 1. Each thread loads its kKeysPerThread keys of the block's tile and counts them
  // @hint:    in shared memory (atomicAdd on two __shared__ counters gives each key below or
  // @hint:    above the pivot its rank in the block; __ballot_sync and one atomicAdd per warp
  // @hint:    is faster). Keys equal to the pivot are not moved: they are all the pivot.
  // @hint: 2. __syncthreads(); thread 0 reserves the block's ranges with ONE global atomicAdd
  // @hint:    per side: the below keys go to seg.dst from lo upwards, the above keys from
  // @hint:    lo + len - 1 downwards (the order inside a side does not matter).
  // @hint: 3. Scatter the keys into seg.dst.
  // @hint: 4. The last block out launches the children: every thread __threadfence()s its
  // @hint:    writes, __syncthreads(), then thread 0 takes a ticket (atomicAdd on the third
  // @hint:    counter). In the block that draws gridDim.x - 1, thread 0 fences again
  // @hint:    (__threadfence()) BEFORE it reads anything or launches: the reader's side of
  // @hint:    chapter 03's last-block pattern, which orders what it reads, and so what the
  // @hint:    children it launches are guaranteed to see, after every other block's keys. It
  // @hint:    then reads the final counts (atomically), calls sort_side for both sides at
  // @hint:    depth + 1, which read seg.dst and write to the other buffer (plan.out or
  // @hint:    plan.spare), and the block writes the == run (the pivot, len - below - above
  // @hint:    times, at lo + below in plan.out: its final place).
  __shared__ unsigned block_below, block_above;  // this block's keys < and > the pivot
  __shared__ unsigned below_base, above_base;    // where its ranges start in the segment
  __shared__ unsigned total_below, total_above;  // the whole segment's, for the last block
  __shared__ bool last_block;

  const int* keys = seg.src + seg.lo;
  const int pivot = pivot_of(keys, seg.len);
  unsigned* counters = plan.counters + 3 * static_cast<std::size_t>(seg.lo);
  if (threadIdx.x == 0) {
    block_below = 0;
    block_above = 0;
  }
  __syncthreads();

  // Each key's side (-1 below, +1 above, 0 equal or past the end) and its rank in the block
  // among the keys of its side: one shared atomicAdd per side per warp, lanes ranked by
  // their place in the warp's ballot.
  const unsigned lane = threadIdx.x % 32;
  const unsigned lanes_before = (1u << lane) - 1;
  int key[kKeysPerThread];
  int side[kKeysPerThread];
  unsigned rank[kKeysPerThread];
  const unsigned tile = blockIdx.x * kPartitionTile;
#pragma unroll
  for (int k = 0; k < kKeysPerThread; ++k) {
    const unsigned i = tile + k * kPartitionThreads + threadIdx.x;
    key[k] = pivot;
    if (i < seg.len) key[k] = keys[i];
    side[k] = (key[k] > pivot) - (key[k] < pivot);
    const unsigned below = __ballot_sync(kFullWarp, side[k] < 0);
    const unsigned above = __ballot_sync(kFullWarp, side[k] > 0);
    unsigned below_start = 0;
    unsigned above_start = 0;
    if (lane == 0) {
      if (below != 0) below_start = atomicAdd(&block_below, __popc(below));
      if (above != 0) above_start = atomicAdd(&block_above, __popc(above));
    }
    below_start = __shfl_sync(kFullWarp, below_start, 0);
    above_start = __shfl_sync(kFullWarp, above_start, 0);
    rank[k] = side[k] < 0 ? below_start + __popc(below & lanes_before)
                          : above_start + __popc(above & lanes_before);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    below_base = atomicAdd(&counters[0], block_below);
    above_base = atomicAdd(&counters[1], block_above);
  }
  __syncthreads();
  int* dst = seg.dst + seg.lo;
#pragma unroll
  for (int k = 0; k < kKeysPerThread; ++k) {
    if (side[k] < 0) dst[below_base + rank[k]] = key[k];
    if (side[k] > 0) dst[seg.len - 1 - (above_base + rank[k])] = key[k];
  }

  // The last block out: every block's keys are written (each thread's fence makes its own
  // writes visible device-wide before its block's ticket) and every count is final.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(&counters[2], 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last_block) return;

  if (threadIdx.x == 0) {
    // The reader's side: after the last ticket, fence before reading or launching, so that
    // this thread's view, which is what its children are guaranteed to see, holds every
    // other block's keys (each block fenced them before its ticket).
    __threadfence();
    total_below = atomicAdd(&counters[0], 0u);  // atomic reads: the final totals
    total_above = atomicAdd(&counters[1], 0u);
    const unsigned equal = seg.len - total_below - total_above;
    int* next_dst = seg.dst == plan.out ? plan.spare : plan.out;
    sort_side(plan, seg.dst, next_dst, seg.lo, total_below, seg.depth + 1);
    sort_side(plan, seg.dst, next_dst, seg.lo + seg.len - total_above, total_above,
              seg.depth + 1);
    if (equal > kFillByBlock)
      fill_kernel<<<min((equal + 2047) / 2048, 1024u), 256, 0, cudaStreamFireAndForget>>>(
          plan.out + seg.lo + total_below, equal, pivot);
  }
  __syncthreads();
  const unsigned equal = seg.len - total_below - total_above;
  if (equal <= kFillByBlock)
    for (unsigned i = threadIdx.x; i < equal; i += blockDim.x)
      plan.out[seg.lo + total_below + i] = pivot;
  // @skeleton: (void)plan; (void)seg;
  // @end-solution
}

void prepare_recursive_quicksort(std::size_t max_n, const QuicksortParams& params) {
  // @begin-solution: Raise the device runtime's launch pool (never lower it: another size
  // @hint: may need more) so that every launch one sort can have pending fits:
  // @hint: cudaDeviceGetLimit / cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, n).
  // @hint: A launch holds its slot until its grid completes, and a partition's grid completes
  // @hint: only after the grids it launched, so count every launch of the tree: at depth d
  // @hint: there are at most 2^d partitions, and at most max_n / (leaf_size + 1) of them
  // @hint: (their segments are disjoint and longer than leaf_size); each launches at most a
  // @hint: few grids. Count, do not guess high: every slot reserves device memory.
  const int depth = std::clamp(params.max_depth, 0, kDeepestDepth);
  const std::size_t leaf = static_cast<std::size_t>(std::max(params.leaf_size, 1));
  const std::size_t widest = max_n / (leaf + 1);
  std::size_t partitions = 0;
  for (int d = 0; d < depth; ++d) partitions += std::min(std::size_t{1} << d, widest);
  // Each partition launches at most three grids: its two sides and a long == run's fill.
  const std::size_t launches = 3 * partitions;
  std::size_t pool = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&pool, cudaLimitDevRuntimePendingLaunchCount));
  if (launches > pool)
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, launches));
  // @skeleton: (void)max_n; (void)params;
  // @end-solution
}

void recursive_quicksort(const int* keys_in, int* keys_out, int* scratch, std::size_t n,
                         const QuicksortParams& params, cudaStream_t stream) {
  // @begin-solution: Build the SortPlan (spare = scratch, counters right after its n ints,
  // @hint: max_depth clamped to a bound of your own, e.g. kMaxLaunchNesting - 2: a depth-d
  // @hint: grid is nested d levels below the one you launch, and nothing on the device stops
  // @hint: a deeper recursion for you).
  // @hint: Then ONE launch on `stream`: a block_sort_kernel of the whole array when n <=
  // @hint: leaf_size or max_depth is 0, else the depth-0 partition_kernel from keys_in into
  // @hint: scratch, its counters zeroed first with cudaMemsetAsync on `stream`. The device
  // @hint: does the rest; do not wait for it.
  if (n == 0) return;
  const unsigned count = static_cast<unsigned>(n);
  SortPlan plan;
  plan.out = keys_out;
  plan.spare = scratch;
  plan.counters = reinterpret_cast<unsigned*>(scratch + n);
  plan.max_depth = std::clamp(params.max_depth, 0, kDeepestDepth);
  plan.leaf_size = static_cast<unsigned>(std::max(params.leaf_size, 1));
  if (count <= plan.leaf_size || plan.max_depth == 0) {
    block_sort_kernel<<<1, sort_threads(count), 0, stream>>>(keys_in, keys_out, 0, count);
    CUDA_CHECK_LAUNCH();
    return;
  }
  CUDA_CHECK(cudaMemsetAsync(plan.counters, 0, 3 * sizeof(unsigned), stream));
  partition_kernel<<<partition_blocks(count), kPartitionThreads, 0, stream>>>(
      plan, Segment{keys_in, scratch, 0, count, 0});
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)keys_in; (void)keys_out; (void)scratch; (void)n; (void)params;
  // @skeleton: (void)stream;
  // @end-solution
}
