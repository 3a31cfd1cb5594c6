// Exercise ch06 / event_dependencies: a three-node graph of work on three streams, ordered
// with events alone.
//
// Frozen API.
//
//   run_dag(x, y, a, b, c, n, stream_a, stream_b, stream_c)
//       producer A, on stream_a:  a[i] = produce_a(x[i])
//       producer B, on stream_b:  b[i] = produce_b(y[i])
//       consumer,   on stream_c:  c[i] = consume(a[i], b[i])
//     for every i in [0, n). x, y, a, b and c are device pointers to n floats.
//     Ordering, and nothing more:
//       * each producer starts after the work already enqueued on its own stream, and waits
//         for nothing else (not for stream_c, not for the other producer);
//       * the consumer starts after both producers have finished and after the work already
//         enqueued on stream_c;
//       * whatever is enqueued on stream_c after the call starts after the consumer, so a
//         caller that synchronises stream_c alone sees a, b and c complete.
//     Express the consumer's dependencies with cudaEventRecord + cudaStreamWaitEvent; run_dag
//     returns without waiting (no cudaDeviceSynchronize, cudaStreamSynchronize or
//     cudaEventSynchronize, nothing on the default stream), so the three streams may be held
//     up by earlier work when it returns. n may be 0 (do nothing). The streams need not
//     differ: given one stream three times, the same code must still be right.
//
// produce_a, produce_b and consume are given below; call them from your kernels, so that your
// results match the CPU reference bit for bit (fmaf rounds once on the host and the device).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

inline __host__ __device__ float produce_a(float x) { return fmaf(x, x, 1.0f); }
inline __host__ __device__ float produce_b(float y) { return fmaf(2.0f, y, -3.0f); }
inline __host__ __device__ float consume(float a, float b) { return fmaf(a, b, a - b); }

void run_dag(const float* x, const float* y, float* a, float* b, float* c, std::size_t n,
             cudaStream_t stream_a, cudaStream_t stream_b, cudaStream_t stream_c);
