// Exercise ch02 / reduce_v2_neighbored_less_divergence: neighbored pairs, less divergence.
//
// Same structure as rung 1; at each stride the thread with index = 2 * stride * tid < block_size
// adds s[index + stride] into s[index].
//
// Frozen API: the rules shared by every rung (n, block_size in 64..1024 powers of two, the
// partial scratch buffer, *out) are in ../reduce_ladder/reduce_ladder.h.
#pragma once

#include <cuda_runtime.h>

#include "reduce_ladder.h"

void reduce_v2_neighbored_less_divergence(const int* in, int n, int block_size, long long* partial, long long* out,
                                          cudaStream_t stream);
