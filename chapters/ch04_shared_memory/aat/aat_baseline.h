// Course-owned kernels the aat benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

// One thread per element of C reading A straight from global memory: A[i][l] is the same word
// for a warp, but A[j][l] for j = 32 consecutive threads is 32 addresses k floats apart, a
// strided access that uses 4 bytes of every 32-byte sector it fetches.
void aat_naive(const float* a, float* c, int m, int k, cudaStream_t stream);
// The shared-memory version with an unpadded 32 x 32 transposed tile: coalesced global reads,
// but storing a column of the tile is a 32-way bank conflict.
void aat_tiled_unpadded(const float* a, float* c, int m, int k, cudaStream_t stream);
