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

// TODO: Constants of your own: how deep the recursion may go (the clamp for
//       params.max_depth), and whatever your partition needs.

__global__ void __launch_bounds__(kPartitionThreads) partition_kernel(SortPlan plan, Segment seg);

// The pivot of keys[0, len), len >= 2.
__device__ int pivot_of(const int* keys, unsigned len) {
  // TODO: Any key of the segment works (the == run then holds at least one key,
  //       so both sides shrink), but the pivot decides how deep the recursion goes: the
  //       median of three keys is the usual choice. Take them a quarter, half and three
  //       quarters of the way in, not first/middle/last: an organ-pipe input (up, then down)
  //       has its smallest keys at both ends, so first/middle/last picks the minimum and
  //       each level peels off two keys. median(a, b, c) = max(min(a, b), min(max(a, b), c)).
  (void)len;
  return keys[0];
}

// Called by one thread of a finished partition: sorts keys[lo, lo + len), one side of it, at
// `depth`, writing a partition's sides to next_dst.
__device__ void sort_side(const SortPlan& plan, const int* keys, int* next_dst, unsigned lo,
                          unsigned len, int depth) {
  // TODO: Nothing to do for 0 keys; 1 key is copied to plan.out[lo] right here (a
  //       launch costs far more). A side of at most plan.leaf_size keys, or at depth
  //       plan.max_depth, goes to ONE block: block_sort_kernel<<<1, sort_threads(len), 0,
  //       cudaStreamFireAndForget>>>(keys, plan.out, lo, len). Any other side is partitioned
  //       in turn: zero its three counters (plan.counters + 3 * lo) BEFORE the launch (the
  //       child sees what this thread wrote before launching it), then
  //       partition_kernel<<<partition_blocks(len), kPartitionThreads, 0,
  //       cudaStreamFireAndForget>>>(plan, {keys, next_dst, lo, len, depth}).
  //       Fire-and-forget: the two sides may run at once, independently, and nobody waits
  //       for them (nothing may: a child is only guaranteed to start once the grid that
  //       launched it has ended). A failed launch (a bad configuration, too many launches
  //       pending, the device out of memory) returns its error to this thread only
  //       (cudaGetLastError() right after it), never to the host: its side just stays
  //       unsorted.
  (void)plan; (void)keys; (void)next_dst; (void)lo; (void)len; (void)depth;
}

// One grid partitions seg, each block a tile of kPartitionTile keys; its last block to finish
// launches the two sides.
__global__ void __launch_bounds__(kPartitionThreads) partition_kernel(SortPlan plan,
                                                                      Segment seg) {
  // TODO: Three-way partition of seg.src[lo, lo + len) around pivot_of(...),
  //       which every block computes alike. The segment's counters are
  //       plan.counters[3 * lo + 0, 1, 2]: keys below the pivot reserved so far, keys above,
  //       blocks finished (the launcher zeroed them).
  //       1. Each thread loads its kKeysPerThread keys of the block's tile and counts them
  //       in shared memory (atomicAdd on two __shared__ counters gives each key below or
  //       above the pivot its rank in the block; __ballot_sync and one atomicAdd per warp
  //       is faster). Keys equal to the pivot are not moved: they are all the pivot.
  //       2. __syncthreads(); thread 0 reserves the block's ranges with ONE global atomicAdd
  //       per side: the below keys go to seg.dst from lo upwards, the above keys from
  //       lo + len - 1 downwards (the order inside a side does not matter).
  //       3. Scatter the keys into seg.dst.
  //       4. The last block out launches the children: every thread __threadfence()s its
  //       writes, __syncthreads(), then thread 0 takes a ticket (atomicAdd on the third
  //       counter). In the block that draws gridDim.x - 1, thread 0 fences again
  //       (__threadfence()) BEFORE it reads anything or launches: the reader's side of
  //       chapter 03's last-block pattern, which orders what it reads, and so what the
  //       children it launches are guaranteed to see, after every other block's keys. It
  //       then reads the final counts (atomically), calls sort_side for both sides at
  //       depth + 1, which read seg.dst and write to the other buffer (plan.out or
  //       plan.spare), and the block writes the == run (the pivot, len - below - above
  //       times, at lo + below in plan.out: its final place).
  (void)plan; (void)seg;
}

void prepare_recursive_quicksort(std::size_t max_n, const QuicksortParams& params) {
  // TODO: Raise the device runtime's launch pool (never lower it: another size
  //       may need more) so that every launch one sort can have pending fits:
  //       cudaDeviceGetLimit / cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, n).
  //       A launch holds its slot until its grid completes, and a partition's grid completes
  //       only after the grids it launched, so count every launch of the tree: at depth d
  //       there are at most 2^d partitions, and at most max_n / (leaf_size + 1) of them
  //       (their segments are disjoint and longer than leaf_size); each launches at most a
  //       few grids. Count, do not guess high: every slot reserves device memory.
  (void)max_n; (void)params;
}

void recursive_quicksort(const int* keys_in, int* keys_out, int* scratch, std::size_t n,
                         const QuicksortParams& params, cudaStream_t stream) {
  // TODO: Build the SortPlan (spare = scratch, counters right after its n ints,
  //       max_depth clamped to a bound of your own, e.g. kMaxLaunchNesting - 2: a depth-d
  //       grid is nested d levels below the one you launch, and nothing on the device stops
  //       a deeper recursion for you).
  //       Then ONE launch on `stream`: a block_sort_kernel of the whole array when n <=
  //       leaf_size or max_depth is 0, else the depth-0 partition_kernel from keys_in into
  //       scratch, its counters zeroed first with cudaMemsetAsync on `stream`. The device
  //       does the rest; do not wait for it.
  (void)keys_in; (void)keys_out; (void)scratch; (void)n; (void)params;
  (void)stream;
}
