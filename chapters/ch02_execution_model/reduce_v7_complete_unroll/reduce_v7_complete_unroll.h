// Exercise ch02 / reduce_v7_complete_unroll: complete unrolling with a template block size.
//
// A kernel template<int kBlock> with rung 6's structure whose tree steps are written out with if
// (kBlock >= 1024 && tid < 512) ... ; the launcher switches on block_size.
//
// Frozen API: the rules shared by every rung (n, block_size in 64..1024 powers of two, the
// partial scratch buffer, *out) are in ../reduce_ladder/reduce_ladder.h.
#pragma once

#include <cuda_runtime.h>

#include "reduce_ladder.h"

void reduce_v7_complete_unroll(const int* in, int n, int block_size, long long* partial, long long* out,
                               cudaStream_t stream);
