#include "barriers.h"

#include <algorithm>

#include "course/check.h"

// The versions you are given, both wrong. Each block handles 256-element segments.
//
//   rotate (a race, like the notes' update_race: thread t reads what thread t + 1 wrote,
//   with nothing making it wait for the write; the next segment then overwrites seg[]
//   while slower threads may still be reading it):
//
//     for (long long s = blockIdx.x * 256LL; s < n; s += gridDim.x * 256LL) {
//       const int len = (int)min(256LL, n - s);
//       if (t < len) seg[t] = in[s + t];
//       if (t < len) out[s + t] = seg[(t + 1) % len];
//     }
//
//   segment_sum (a barrier inside a branch only some threads take: threads t >= stride
//   skip it and reach the barrier after the loop instead, which the hardware may pair with
//   the one inside the branch, or never release):
//
//     partial[t] = t < len ? in[s + t] : 0;
//     __syncthreads();
//     for (int stride = 128; stride > 0; stride /= 2) {
//       if (t < stride) {
//         partial[t] += partial[t + stride];
//         __syncthreads();
//       }
//     }
//     __syncthreads();
//     if (t < len) out[s + t] = partial[0];
//
// compute-sanitizer --tool racecheck reports the first; --tool synccheck the second.

__global__ void barriers_rotate_kernel(const int* __restrict__ in, int* __restrict__ out,
                                       int n) {
  // @begin-solution: Keep the loop and a __shared__ int seg[kBarrierSegment]; add a __syncthreads()
  // @hint: between filling seg[] and reading a neighbour from it (read-after-write), and one
  // @hint: at the end of each iteration, before the next segment overwrites seg[]
  // @hint: (write-after-read). The loop bound is the same for the whole block, so every
  // @hint: thread reaches both barriers.
  __shared__ int seg[kBarrierSegment];
  const int t = threadIdx.x;
  const long long step = static_cast<long long>(gridDim.x) * kBarrierSegment;
  for (long long s = static_cast<long long>(blockIdx.x) * kBarrierSegment; s < n; s += step) {
    const int len = static_cast<int>(std::min<long long>(kBarrierSegment, n - s));
    if (t < len) seg[t] = in[s + t];
    __syncthreads();  // seg[t + 1] was written by another thread
    if (t < len) out[s + t] = seg[(t + 1) % len];
    __syncthreads();  // everyone has read seg[] before the next segment refills it
  }
  // @skeleton: (void)in; (void)out; (void)n;
  // @end-solution
}

__global__ void barriers_segment_sum_kernel(const int* __restrict__ in,
                                            long long* __restrict__ out, int n) {
  // @begin-solution: A __shared__ long long partial[kBarrierSegment] filled with the segment (0 past its
  // @hint: end), __syncthreads(), then the halving tree with the barrier after the if, not
  // @hint: inside it, so all 256 threads reach every barrier; then every thread of the
  // @hint: segment writes partial[0].
  __shared__ long long partial[kBarrierSegment];
  const int t = threadIdx.x;
  const long long s = static_cast<long long>(blockIdx.x) * kBarrierSegment;
  const int len = static_cast<int>(std::min<long long>(kBarrierSegment, n - s));
  partial[t] = t < len ? in[s + t] : 0;
  __syncthreads();
  for (int stride = kBarrierSegment / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();  // outside the if: the whole block arrives, every step
  }
  if (t < len) out[s + t] = partial[0];
  // @skeleton: (void)in; (void)out; (void)n;
  // @end-solution
}

void barriers_rotate(const int* in, int* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: kBarrierSegment threads per block; a few blocks per SM that loop over the segments
  // @hint: (or one block per segment); on `stream`, then CUDA_CHECK_LAUNCH().
  const long long segments = (static_cast<long long>(n) + kBarrierSegment - 1) / kBarrierSegment;
  // A bounded grid makes each block reuse seg[] for several segments.
  const int blocks = static_cast<int>(std::min<long long>(segments, 1024));
  barriers_rotate_kernel<<<blocks, kBarrierSegment, 0, stream>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)stream;
  // @end-solution
}

void barriers_segment_sum(const int* in, long long* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: One block of kBarrierSegment threads per segment, on `stream`, then
  // @hint: CUDA_CHECK_LAUNCH().
  const int segments = static_cast<int>((static_cast<long long>(n) + kBarrierSegment - 1) / kBarrierSegment);
  barriers_segment_sum_kernel<<<segments, kBarrierSegment, 0, stream>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)stream;
  // @end-solution
}
