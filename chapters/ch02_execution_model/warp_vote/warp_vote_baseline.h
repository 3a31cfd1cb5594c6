// Course-owned GPU code for warp_vote.
#pragma once

#include <cuda_runtime.h>

// The same stable two-pass compaction as compact_if_greater (same arguments, same rules, same
// scratch), written without warp votes: pass 1 counts each kept element with a shared-memory
// atomicAdd, the scan and pass 2 rank the elements with a per-element prefix sum in shared
// memory (Hillis-Steele, one __syncthreads() per step).
void shared_atomic_compact(const int* in, int n, int threshold, int* out, int* count,
                           int* scratch, cudaStream_t stream);
