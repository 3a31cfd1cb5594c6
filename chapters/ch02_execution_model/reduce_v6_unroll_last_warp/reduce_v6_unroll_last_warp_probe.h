// Course-owned probe of warp_reduce_last under independent thread scheduling, for the tests.
#pragma once

#include <cuda_runtime.h>

// For each trial t (one warp each): s[0..63] = values[64 t .. 64 t + 63] in shared memory;
// the lanes whose bit is set in masks[t] call warp_reduce_last from one branch after spinning
// for spin_cycles clock cycles, the others from a second branch before spinning; sums[t] =
// s[0] afterwards. A mask of 0xffffffff keeps the warp converged. Defined in
// reduce_v6_unroll_last_warp_probe.cu.
void probe_warp_reduce_last(const long long* values, const unsigned* masks, int trials,
                            long long spin_cycles, long long* sums, cudaStream_t stream);
