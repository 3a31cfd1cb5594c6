// Exercise ch02 / reduce_v3_interleaved: interleaved pairs.
//
// for (stride = blockDim.x / 2; stride > 0; stride /= 2) threads with tid < stride add s[tid +
// stride].
//
// Frozen API: the rules shared by every rung (n, block_size in 64..1024 powers of two, the
// partial scratch buffer, *out) are in ../reduce_ladder/reduce_ladder.h.
#pragma once

#include <cuda_runtime.h>

#include "reduce_ladder.h"

void reduce_v3_interleaved(const int* in, int n, int block_size, long long* partial, long long* out,
                           cudaStream_t stream);
