// Exercise ch02 / reduce_v1_neighbored: neighbored pairs.
//
// Each block loads its block_size elements (0 past n) into shared memory as long long, then for
// stride = 1, 2, 4, ... the threads with tid % (2 * stride) == 0 add s[tid + stride]; thread 0
// writes the block's sum to partial[blockIdx.x], and reduce_partials finishes.
//
// Frozen API: the rules shared by every rung (n, block_size in 64..1024 powers of two, the
// partial scratch buffer, *out) are in ../reduce_ladder/reduce_ladder.h.
#pragma once

#include <cuda_runtime.h>

#include "reduce_ladder.h"

void reduce_v1_neighbored(const int* in, int n, int block_size, long long* partial, long long* out,
                          cudaStream_t stream);
