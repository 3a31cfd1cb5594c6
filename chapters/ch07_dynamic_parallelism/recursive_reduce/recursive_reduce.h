// Exercise ch07 / recursive_reduce: the notes' recursive reduction under CDP2, one level of the
// reduction per grid, each level launched from the device by the level before it.
//
// Frozen API: the tests and the benchmark call exactly this.
//
//   recursive_reduce(in, scratch, n, result, stream)
//       *result = in[0] + in[1] + ... + in[n - 1], exactly, as a long long; n = 0 writes 0.
//       The host launches ONE grid on `stream`: level 0, which sums `in` into one partial sum
//       per block. Every further level is launched from the device by the level before it and
//       sums that level's partial sums the same way, until a level of ONE block writes
//       *result. A level may read its partial sums only once every block of the level before
//       has written them: launch the next level into cudaStreamTailLaunch (it starts after
//       the whole launching grid, and everything that grid launched fire-and-forget, has
//       completed), from one thread of the grid.
//       in       device pointer to n ints at any int-aligned address; never written.
//       scratch  device scratch of recursive_reduce_scratch_size(n) long longs for the
//                partial sums of every level (garbage on entry); nothing past it is written.
//       n        0 <= n < 2^32.
//       result   device pointer to one long long; nothing past it is written.
//       stream   everything is enqueued on `stream`; the function returns without waiting.
//                The host sees the level-0 grid as complete only when every level launched
//                from it is, so the call behaves as one operation on `stream`.
//
// Depth: with blocks that each sum a tile of T elements there are about log_T(n) levels (3 for
// 2^24 ints and T = 2048), with at most two device launches pending at a time (the running
// level and the one it has tail-launched). Each level launched from the device costs about
// 11 us on an H100, so fewer, fuller levels are faster. The recursion must stop on its own (at
// the level of one block): a chain of tail launches gives its pending-launch slots back as it
// goes, and the H100 ran one of 100,000 levels without refusing a launch, so a level that
// always launches another runs until the grader stops the case. A device-side launch that
// fails (a bad configuration, too many launches pending, the device out of memory) does not
// reach the host as an error: its grid never runs and *result is never written.
// cudaGetLastError() right after the launch, on the device, says why.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// Long longs of scratch for n inputs: n / 16 + 64. Enough for the partial sums of every level
// stored one level after the other (level 0's, then level 1's right after them, ...) as long
// as each block sums at least 32 values: the levels hold about n / 31 values in all.
inline std::size_t recursive_reduce_scratch_size(std::size_t n) { return n / 16 + 64; }

void recursive_reduce(const int* in, long long* scratch, std::size_t n, long long* result,
                      cudaStream_t stream);
