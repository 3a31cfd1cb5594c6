// Exercise ch02 / reduce_v8_warp_shuffle: grid-stride, vector loads and warp shuffles.
//
// A kernel that peels the unaligned head, reads int4 vectors grid-stride (several in flight per
// thread), reduces each warp with __shfl_down_sync and the block's warp sums in shared memory, and
// adds the block's sum to *out with one atomicAdd (after zeroing *out on the stream).
//
// Frozen API: the rules shared by every rung (n, block_size in 64..1024 powers of two, the
// partial scratch buffer, *out) are in ../reduce_ladder/reduce_ladder.h.
#pragma once

#include <cuda_runtime.h>

#include "reduce_ladder.h"

void reduce_v8_warp_shuffle(const int* in, int n, int block_size, long long* partial, long long* out,
                            cudaStream_t stream);
