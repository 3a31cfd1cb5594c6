// Exercise ch03 / coalescing: copies whose access pattern is misaligned or strided, to
// measure what the memory system does with each warp's addresses.
//
// Frozen API. in and out are device arrays of floats; both are allocated large enough for
// the indices used.
//
//   offset_copy(in, out, n, offset, stream)
//       out[offset + i] = in[offset + i] for i in [0, n): thread t handles element offset + t,
//       so with offset != 0 (mod 32) each warp's 128 bytes straddle two 128-byte lines.
//   strided_copy(in, out, n, stride, stride_stream)
//       out[i * stride] = in[i * stride] for i in [0, n): consecutive threads touch elements
//       `stride` apart. Nothing else is written.
//
// offset >= 0, stride >= 1, n >= 0; enqueued on `stream`, returning without waiting.
// Consecutive threads must handle consecutive i: that is the access pattern being measured.
#pragma once

#include <cuda_runtime.h>

void offset_copy(const float* in, float* out, int n, int offset, cudaStream_t stream);
void strided_copy(const float* in, float* out, int n, int stride, cudaStream_t stream);
