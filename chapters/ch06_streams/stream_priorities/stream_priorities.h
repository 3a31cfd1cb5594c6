// Exercise ch06 / stream_priorities: a short, latency-sensitive kernel submitted while a long
// kernel on another stream keeps every SM busy. On streams of equal priority the short kernel
// waits until the long one has handed out all its blocks; on a stream of higher priority the
// block scheduler gives it the first room that frees up on an SM.
//
// Frozen API: the tests and the benchmark call exactly this.
//
//   create_priority_streams(&urgent, &background)
//       makes two new non-blocking streams, each with
//       cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority): `urgent` with the
//       greatest priority the device offers and `background` with the least, both read from
//       cudaDeviceGetStreamPriorityRange(&least, &greatest). Lower numbers are higher
//       priorities, so greatest <= least (on current GPUs greatest is negative and least is
//       0, the priority every stream gets by default).
//   destroy_priority_streams(urgent, background)
//       destroys both. The caller never destroys them while their work may still be running.
//   submit_urgent(in, out, n, urgent)
//       out[i] = urgent_response(in[i]) for every i in [0, n), in one kernel of a few blocks
//       (the benchmark's n is a few thousand: one thread per element is fine) enqueued on
//       `urgent`, which may be any stream; returns without waiting. in and out are device
//       pointers to n floats that do not overlap; in must not be modified; n = 0 does nothing.
//
// The benchmark keeps the GPU busy with a long course kernel on `background`, then times
// submit_urgent on `urgent` with events recorded just before and after it on that stream, and
// compares that latency with the same short work on two streams of default priority.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

constexpr int kUrgentSteps = 32;
constexpr float kUrgentOffset = -1.9f;

// One element's response (course-owned): kUrgentSteps steps of y <- y * y + kUrgentOffset
// from y = x, each one fused multiply-add, so the host and the device round identically and
// results compare exactly; plus x, so the result always follows its input. Inputs in
// [-1.9, 1.9] keep every step there; the tests use [-1, 1].
inline __host__ __device__ float urgent_response(float x) {
  float y = x;
  for (int step = 0; step < kUrgentSteps; ++step) y = fmaf(y, y, kUrgentOffset);
  return y + x;
}

void create_priority_streams(cudaStream_t* urgent, cudaStream_t* background);
void destroy_priority_streams(cudaStream_t urgent, cudaStream_t background);
void submit_urgent(const float* in, float* out, std::size_t n, cudaStream_t urgent);
