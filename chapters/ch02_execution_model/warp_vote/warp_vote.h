// Exercise ch02 / warp_vote: stream compaction with warp votes. Keep the elements of an int
// array that are greater than a threshold, in their original order.
//
// Inside a warp, __ballot_sync(mask, keep) gives every lane the 32 keep flags as one word:
// the warp keeps __popc(ballot) elements, and a kept lane's place among them is the number of
// kept lanes below it, __popc(ballot & lanes_below). One vote and one popc replace an atomic
// per element. A single atomicAdd per warp on a global counter would reserve each warp's
// places, but warps reach it in any order, so the result would not be stable; the order
// across warps and blocks comes instead from two passes over the input:
//   1. every block counts what its tile keeps (a ballot and a popc per warp and row, the warp
//      counts added in shared memory) and writes the count to scratch;
//   2. an exclusive scan of the block counts gives each block the place of its first kept
//      element (and the scan's total is *count);
//   3. every block reads its tile again and writes each kept element at
//      block offset + kept elements of the warps before it + its place within the warp.
// The chapter README says how the reference solution cuts the input into tiles.
//
// Frozen API: the tests and the benchmark call exactly this.
//
//   compact_if_greater(in, n, threshold, out, count, scratch, stream)
//     in         device pointer to n ints; never written.
//     n          0 <= n < 2^31. n = 0 writes 0 to *count and nothing else.
//     threshold  element in[i] is kept when in[i] > threshold (not >=).
//     out        device pointer to n ints: on return out[0, k) holds the k kept elements in
//                the order they have in `in`. Nothing past out[k - 1] may be written.
//     count      device pointer to one int: on return *count == k.
//     scratch    compact_scratch_ints(n) ints of device memory, yours for the call. Its
//                contents on entry are garbage (a second call finds the first one's), so
//                whatever the call relies on, it writes first.
//     stream     all work goes on this stream; the function returns without waiting (never
//                read *count on the host).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// One int per 32 elements of input, and 32 more: room for a count (or an offset) per block
// for any tile of 32 elements or more, or for a count and an offset per tile of 64.
inline std::size_t compact_scratch_ints(int n) {
  return static_cast<std::size_t>(n > 0 ? n : 0) / 32 + 32;
}

void compact_if_greater(const int* in, int n, int threshold, int* out, int* count, int* scratch,
                        cudaStream_t stream);
