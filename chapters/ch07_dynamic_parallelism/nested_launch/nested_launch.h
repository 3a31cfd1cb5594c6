// Exercise ch07 / nested_launch: a kernel that launches itself from the device, each child
// grid with half the threads of its parent, down to a depth limit.
//
// Frozen API: the tests and the benchmark call exactly this.
//
//   record_nested_launches(records, count, blocks, threads, max_depth, stream)
//       launches, on `stream`, ONE grid of `blocks` blocks of `threads` threads: depth 0.
//       Every thread of every grid at every depth appends one LaunchRecord to `records`,
//       taking its slot with atomicAdd(count, 1), so the records of one call fill
//       records[c, c + nested_launch_record_count(blocks, threads, max_depth)) in whatever
//       order the atomics give, c being *count when the call runs (the caller sets it; the
//       tests start it at 0 and at other values). Thread 0 of each block of a grid at depth
//       d, with t threads per block, launches from the device ONE child grid of 1 block of
//       t / 2 threads (rounded down) at depth d + 1, when d < max_depth and t / 2 >= 1; no
//       other thread launches. So each depth-0 block starts its own chain: t, t/2, t/4, ...
//       threads, one grid per depth.
//       A record holds the grid's depth, root_block (the depth-0 block whose chain the grid
//       belongs to; at depth 0 its own block), the block index within its grid and the
//       thread index within its block.
//       Enqueues on `stream` only and returns without waiting: the host sees the depth-0
//       grid as complete only when all its descendants are, so the call behaves as one
//       operation on `stream`. records and count are device pointers; records has room for
//       the records the call appends after *count.
//       1 <= blocks <= 64, 1 <= threads <= 1024, max_depth >= 0: at most 640 device
//       launches in all, well under the pending-launch limit the programming guide
//       documents (2048 by default). max_depth may be large (the tests use 30): halving
//       reaches 1 thread first (at depth 10 from 1024 threads), so the thread count, not
//       max_depth, ends every chain here.
//
// A device-side launch that fails (a bad configuration, too many launches pending, the
// device out of memory) does not reach the host as an error: its grid simply never runs,
// and its records are missing. cudaGetLastError() right after the launch, on the device,
// says why.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

struct LaunchRecord {
  int depth;       // 0 for the grid the host launched
  int root_block;  // the depth-0 block the chain started from
  int block;       // blockIdx.x within its grid
  int thread;      // threadIdx.x within its block
};

// How many records one call appends: every depth-0 block contributes threads + threads/2 +
// threads/4 + ... over depths 0..max_depth, stopping after the depth with 1 thread.
inline std::size_t nested_launch_record_count(int blocks, int threads, int max_depth) {
  std::size_t per_chain = 0;
  for (int depth = 0, t = threads; t >= 1 && depth <= max_depth; ++depth, t /= 2)
    per_chain += static_cast<std::size_t>(t);
  return per_chain * static_cast<std::size_t>(blocks);
}

void record_nested_launches(LaunchRecord* records, int* count, int blocks, int threads,
                            int max_depth, cudaStream_t stream);
