// Exercise ch02 / reduce_v4_unroll2: two data blocks per thread block.
//
// Block b covers elements [2 * b * block_size, 2 * (b + 1) * block_size): each thread adds its
// element and the one block_size further on (0 past n) before the interleaved tree.
//
// Frozen API: the rules shared by every rung (n, block_size in 64..1024 powers of two, the
// partial scratch buffer, *out) are in ../reduce_ladder/reduce_ladder.h.
#pragma once

#include <cuda_runtime.h>

#include "reduce_ladder.h"

void reduce_v4_unroll2(const int* in, int n, int block_size, long long* partial, long long* out,
                       cudaStream_t stream);
