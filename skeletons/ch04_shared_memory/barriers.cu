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
  // TODO: Keep the loop and a __shared__ int seg[kBarrierSegment]; add a __syncthreads()
  //       between filling seg[] and reading a neighbour from it (read-after-write), and one
  //       at the end of each iteration, before the next segment overwrites seg[]
  //       (write-after-read). The loop bound is the same for the whole block, so every
  //       thread reaches both barriers.
  (void)in; (void)out; (void)n;
}

__global__ void barriers_segment_sum_kernel(const int* __restrict__ in,
                                            long long* __restrict__ out, int n) {
  // TODO: A __shared__ long long partial[kBarrierSegment] filled with the segment (0 past its
  //       end), __syncthreads(), then the halving tree with the barrier after the if, not
  //       inside it, so all 256 threads reach every barrier; then every thread of the
  //       segment writes partial[0].
  (void)in; (void)out; (void)n;
}

void barriers_rotate(const int* in, int* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // TODO: kBarrierSegment threads per block; a few blocks per SM that loop over the segments
  //       (or one block per segment); on `stream`, then CUDA_CHECK_LAUNCH().
  (void)in; (void)out; (void)stream;
}

void barriers_segment_sum(const int* in, long long* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // TODO: One block of kBarrierSegment threads per segment, on `stream`, then
  //       CUDA_CHECK_LAUNCH().
  (void)in; (void)out; (void)stream;
}
