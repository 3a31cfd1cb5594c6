// Exercise ch04 / barriers: two kernels whose given versions misuse __syncthreads() (one has a
// race, one a barrier inside a divergent branch); write them correctly.
//
// Frozen API: the tests call exactly this. The input is cut into segments of
// kBarrierSegment = 256 consecutive elements (the last one may be shorter: len = n - start).
//   barriers_rotate:      out[start + t] = in[start + (t + 1) % len] for 0 <= t < len: each
//                         segment rotated left by one element.
//   barriers_segment_sum: out[start + t] = the sum of in[start, start + len), for every t: each
//                         segment's exact total (64 bits), repeated over the segment.
// in and out are device pointers, do not overlap; 0 <= n < 2^31, n = 0 does nothing. Nothing
// outside out[0, n) may be written, and `in` must not be modified. The work is enqueued on
// `stream`; the functions return without waiting.
#pragma once

#include <cuda_runtime.h>

constexpr int kBarrierSegment = 256;

void barriers_rotate(const int* in, int* out, int n, cudaStream_t stream);
void barriers_segment_sum(const int* in, long long* out, int n, cudaStream_t stream);
