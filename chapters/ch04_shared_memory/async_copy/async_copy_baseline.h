// Course-owned code the async_copy benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

// The same stencil with synchronous staging: each block loops over tiles of 2048 outputs;
// per tile its 256 threads load the tile and its halo into shared memory with ordinary loads,
// __syncthreads(), compute, __syncthreads(). Four blocks per SM.
void async_copy_sync_tiles(const float* in, float* out, int n, cudaStream_t stream);
