// Exercise ch02 / reduce_v6_unroll_last_warp: unrolling the last warp.
//
// Rung 5's loads, the interleaved tree while stride > 32, then warp 0 calls warp_reduce_last (also
// yours, below) to sum s[0..63].
//
// Frozen API: the rules shared by every rung (n, block_size in 64..1024 powers of two, the
// partial scratch buffer, *out) are in ../reduce_ladder/reduce_ladder.h.
//
// You also write the last warp's step, in the same file:
//
//   __device__ void warp_reduce_last(long long* s, unsigned lane);
//
// Called by the 32 lanes of one warp (lane = 0..31) with s pointing to 64 long longs in
// shared memory; on return s[0] holds s[0] + ... + s[63] (the other entries may hold
// anything). It must be correct however the lanes of the warp are scheduled: since Volta
// (independent thread scheduling) lanes need not run in lockstep, so `volatile` alone does not
// order one lane's write before another lane's read. The tests also call it with the warp's
// lanes split across two branches (the course's probe kernel, which this header brings into
// your file's translation unit so that it can inline your function at two call sites): use
// __syncwarp() between reads and writes, or shuffles.
#pragma once

#include <cuda_runtime.h>

#include "reduce_ladder.h"

void reduce_v6_unroll_last_warp(const int* in, int n, int block_size, long long* partial, long long* out,
                                cudaStream_t stream);

#ifdef __CUDACC__
__device__ void warp_reduce_last(long long* s, unsigned lane);
#include "reduce_v6_unroll_last_warp_probe.cuh"
#endif
