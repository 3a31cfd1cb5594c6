// Exercise ch07 / recursive_quicksort: a quicksort whose recursion runs on the GPU. Each
// partition is a grid; once it is done, the device itself launches the grids that sort its
// two sides, with no round trip to the host. The lesson is what that costs: the benchmark
// sets it against CUB's radix sort in the same run.
//
// Frozen API: the tests and the benchmark call exactly this.
//
//   recursive_quicksort(keys_in, keys_out, scratch, n, params, stream)
//       sorts keys_in[0, n) into keys_out[0, n) in ascending order (what std::sort gives), for
//       any 0 <= n < 2^31 and any keys: duplicates, INT_MIN and INT_MAX included. n = 0 does
//       nothing. keys_in is never written. scratch is quicksort_scratch_ints(n) ints of
//       device memory, yours for the call (a second buffer for the keys, a few counters per
//       segment); it holds garbage on entry, so whatever the call relies on, it initialises.
//       Enqueues on `stream` only and returns without waiting: the host sees the grid it
//       launched as complete only when every grid launched below it is, so the whole sort
//       behaves as one operation on `stream`. All pointers are device pointers; one call at
//       a time per scratch buffer.
//       The recursion, on segments [lo, hi) of the keys: the whole array is depth 0, and
//       the two sides of a partition at depth d are at depth d + 1. A segment
//         - of at most params.leaf_size keys, or at depth params.max_depth, is sorted by ONE
//           block, whatever its length (so max_depth = 0 sorts everything in one block);
//         - otherwise is partitioned by a grid of blocks around a pivot taken from the
//           segment: the keys equal to the pivot are then in their final place, and the keys
//           below and above it are the two sides, each sorted the same way by grids the
//           device launches.
//       params.max_depth may be far deeper than any useful recursion (the tests pass 1000):
//       clamp it to a sane bound of your own, such as kMaxLaunchNesting - 2, and still sort
//       whatever params say. Nothing on the device stops a deep recursion in time (on the H100
//       a chain of fire-and-forget launches was refused only at its 2048th level, when every
//       slot of the pending-launch pool was taken, each level waiting about 11 us for its
//       launch), and the pending launches prepare_recursive_quicksort counts must stay bounded.
//       The sides are launched fire-and-forget: a child is only guaranteed to start once the
//       grid that launched it has ended, so no grid may wait for its children's results.
//       A device-side launch that fails (a bad configuration, too many launches pending,
//       the device out of memory) returns its error only to the launching thread, through
//       cudaGetLastError() right after it; the host is never told, and the segment that
//       launch was for simply stays unsorted.
//
//   prepare_recursive_quicksort(max_n, params)
//       host-side set-up, called by the tests and the benchmark before any
//       recursive_quicksort with n <= max_n and these params (several times, for different
//       sizes and params: each call must keep what the earlier ones set up working). It may
//       synchronise the device and raise device limits; it sorts nothing. The device runtime
//       keeps a fixed pool of launch slots, 2048 by default: a launch holds one until its
//       grid has completed (a partition's grid completes only after the grids it launched),
//       and a launch that finds the pool full fails. Raise it with
//       cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, ...) to the most launches
//       one sort of max_n keys can have pending at once, counted rather than guessed: the
//       runtime reserves device memory for every slot up front (cudaDeviceSetLimit fails with
//       cudaErrorMemoryAllocation when it cannot), and the guide asks for the limit to be set
//       before kernels run, never while the GPU is running work (the tests and the benchmark
//       call this with no sort in flight).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// The course's bound on how deeply device-side launches nest. 24 is the nesting depth CDP1
// documents; the CDP2 guide lists a pool of pending launches, not a depth, among its limits,
// and the H100 (CUDA 13) ran chains far deeper, so nothing enforces it: keep recursions
// within it yourself.
inline constexpr int kMaxLaunchNesting = 24;

struct QuicksortParams {
  int max_depth = 20;    // segments at this depth are sorted by one block; >= 0
  int leaf_size = 4096;  // segments of at most this many keys are sorted by one block; >= 1
};

// The ints of scratch one call may use: room for a second copy of the keys and for three
// counters per key index (a segment's counters can live at its first index).
inline std::size_t quicksort_scratch_ints(std::size_t n) { return 4 * n; }

void prepare_recursive_quicksort(std::size_t max_n, const QuicksortParams& params);

void recursive_quicksort(const int* keys_in, int* keys_out, int* scratch, std::size_t n,
                         const QuicksortParams& params, cudaStream_t stream);
