// Exercise ch01 / vector_add: c[i] = a[i] + b[i] for every i in [0, n).
//
// Frozen API: the tests and the benchmark call exactly this. a, b and c are device pointers
// to at least n floats; they may sit at any float-aligned address (not only at the start of
// an allocation). n may be 0 (do nothing) or far larger than one grid's worth of threads.
// The work is enqueued on `stream`; the function returns without waiting for it.
#pragma once

#include <cuda_runtime.h>

void vector_add(const float* a, const float* b, float* c, int n, cudaStream_t stream);
