// Exercise ch04 / aat: C = A A^T through shared-memory tiles (the Best Practices Guide's
// example of coalescing with shared memory and of padding against bank conflicts).
//
// Frozen API: the tests and the benchmark call exactly this. `a` holds an m x k matrix A in
// row-major order (element (r, l) at a[r * k + l]); `c` receives the m x m matrix
// C[i][j] = sum over l < k of A[i][l] * A[j][l], row-major (c[i * m + j]). m may be 0 (do
// nothing); k may be 0 (C is all zeros, and must still be written). m and k are any sizes, not
// only multiples of a tile, with m * m and m * k up to 2^31. Both are device pointers to
// float-aligned memory. Nothing outside c[0, m * m) may be written, and `a` must not be
// modified. The work is enqueued on `stream`; the function returns without waiting.
#pragma once

#include <cuda_runtime.h>

void aat(const float* a, float* c, int m, int k, cudaStream_t stream);
