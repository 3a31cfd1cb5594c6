// Exercise ch04 / async_copy: a 1D stencil whose input tiles are staged in shared memory with
// asynchronous copies (16-byte cuda::memcpy_async into a multi-stage pipeline of shared buffers),
// so the copies of the next tiles overlap the computation on the current one.
//
// Frozen API: the tests and the benchmark call exactly this.
//   out[i] = sum over d = -4..4 of (5 - |d|) * in[i + d] / 25, for 0 <= i < n,
// with in[j] taken as 0 outside [0, n) (the weights 1 2 3 4 5 4 3 2 1 sum to 25).
// in and out are device pointers to float-aligned memory, not necessarily 16-byte aligned (the
// tests pass pointers into the middle of allocations), and do not overlap. 0 <= n < 2^31;
// n = 0 does nothing. Nothing outside out[0, n) may be written, and `in` must not be modified.
// The work is enqueued on `stream`; the function returns without waiting.
#pragma once

#include <cuda_runtime.h>

constexpr int kAsyncCopyRadius = 4;

void async_copy(const float* in, float* out, int n, cudaStream_t stream);
