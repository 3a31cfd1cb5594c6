// Exercise ch03 / single_pass_reduce: a sum in ONE kernel launch, finished by the last block to
// arrive. Each block leaves its partial sum in global memory, fences, and draws a ticket from a
// counter with atomicAdd; the block that draws the last ticket adds up the partials, writes the
// total and sets the counter back to 0 for the next call.
//
// Frozen API.
//
//   single_pass_reduce(in, n, scratch, out, stream)
//     *out = in[0] + ... + in[n - 1], exactly, as a long long; 0 <= n < 2^31 (n = 0 gives 0).
//     in       device pointer to n ints at any int-aligned address; never written.
//     scratch  device memory of single_pass_scratch_bytes() bytes, 8-byte aligned, laid out
//              as below. The caller allocates it and ZEROES IT ONCE, right after allocating
//              (cudaMemset(scratch, 0, single_pass_scratch_bytes())), then passes it to any
//              number of calls. Every call must leave the counter at 0 again when its kernel
//              ends: the launcher never clears it, the kernel's last block does.
//     out      device pointer to one long long.
//     stream   the kernel goes on this stream; the launcher returns without waiting.
//
//   The launcher enqueues exactly ONE kernel and nothing else, whatever n (0 included): no
//   memset, no copy, no second kernel. A launch uses at most kSinglePassMaxBlocks blocks.
//   Calls that share a scratch buffer must not run at the same time (calls on one stream never
//   do).
//
//   Scratch layout (single_pass_counter and single_pass_partials give the two pointers):
//     bytes [0, 4)   unsigned int counter: how many blocks of the running launch are done
//     bytes [4, 8)   unused
//     bytes [8, ...) long long partial[kSinglePassMaxBlocks]: one partial sum per block
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

inline constexpr int kSinglePassMaxBlocks = 8192;

inline constexpr std::size_t single_pass_scratch_bytes() {
  return sizeof(long long) * (1 + static_cast<std::size_t>(kSinglePassMaxBlocks));
}

inline unsigned int* single_pass_counter(void* scratch) {
  return static_cast<unsigned int*>(scratch);
}

inline long long* single_pass_partials(void* scratch) {
  return static_cast<long long*>(scratch) + 1;
}

void single_pass_reduce(const int* in, int n, void* scratch, long long* out, cudaStream_t stream);
