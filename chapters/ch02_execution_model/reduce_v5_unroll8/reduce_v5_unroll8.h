// Exercise ch02 / reduce_v5_unroll8: eight data blocks per thread block.
//
// Block b covers 8 * block_size elements; each thread adds its eight elements (block_size apart, 0
// past n) into a long long, then the interleaved tree.
//
// Frozen API: the rules shared by every rung (n, block_size in 64..1024 powers of two, the
// partial scratch buffer, *out) are in ../reduce_ladder/reduce_ladder.h.
#pragma once

#include <cuda_runtime.h>

#include "reduce_ladder.h"

void reduce_v5_unroll8(const int* in, int n, int block_size, long long* partial, long long* out,
                       cudaStream_t stream);
