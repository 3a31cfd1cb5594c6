// Exercise ch06 / concurrent_kernels: many small independent kernels, each too small to fill
// the GPU, that run one after another on one stream (on the legacy default stream they
// always do). Spread them over a pool of non-blocking streams so that they run side by side.
//
// Frozen API: the tests and the benchmark call exactly this.
//
//   create_stream_pool(count)
//       a new pool of `count` (>= 1) streams, each created with
//       cudaStreamCreateWithFlags(..., cudaStreamNonBlocking), all distinct, so they never
//       wait for the legacy default stream or for each other. Anything else run_tasks needs
//       from one call to the next (events) may live in the pool too.
//   destroy_stream_pool(pool)
//       releases everything create_stream_pool made; accepts nullptr. The caller never
//       destroys a pool while work of its run_tasks calls may still be running.
//   pool_stream(pool, i)
//       the pool's i-th stream, 0 <= i < count (the tests read its flags).
//   run_tasks(pool, inputs, outputs, n_each, tasks, iterations, stream)
//       for every task t in [0, tasks) and every i in [0, n_each):
//           outputs[t][i] = task_chain(inputs[t][i], iterations)
//       Each task is one launch of its own small kernel (one block of kTaskThreads threads is
//       plenty: an element's steps form a chain that no arrangement of threads can shorten).
//       inputs and outputs are host arrays of `tasks` device pointers, each to n_each floats;
//       no output overlaps another or any input, and the inputs must not be modified.
//       tasks >= 0, iterations >= 0; tasks == 0 or n_each == 0 does nothing.
//       Deal the tasks over the pool's streams, and behave, seen from `stream`, like one
//       operation enqueued on it:
//         * fork: no task starts before the work already enqueued on `stream` (record an
//           event on `stream`, make each pool stream you use cudaStreamWaitEvent on it);
//         * join: everything enqueued on `stream` after the call starts after every task has
//           finished (record an event on each pool stream after its last task, make `stream`
//           wait on each);
//         * return without waiting: no cudaDeviceSynchronize, cudaStreamSynchronize or
//           cudaEventSynchronize, nothing on the default stream. `stream` may itself be the
//           legacy default stream (the tests pass nullptr); that changes nothing above.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

constexpr int kTaskThreads = 128;
constexpr float kTaskOffset = -1.9f;

// One element's work (course-owned): `iterations` steps of x <- x * x + kTaskOffset, each one
// fused multiply-add, so the host and the device round identically and results compare
// exactly; the result is where the chain ends plus where it started, so it follows its input
// even where two chains run into the same cycle. Every step needs the one before, so a task
// takes `iterations` FMA latencies however many threads it has. Starts in [-1.9, 1.9] stay
// there (x * x + kTaskOffset lies in [-1.9, 1.71]); the tests use [-1, 1].
inline __host__ __device__ float task_chain(float start, int iterations) {
  float x = start;
  for (int step = 0; step < iterations; ++step) x = fmaf(x, x, kTaskOffset);
  return x + start;
}

struct StreamPool;  // yours to define in concurrent_kernels.cu

StreamPool* create_stream_pool(int count);
void destroy_stream_pool(StreamPool* pool);
cudaStream_t pool_stream(const StreamPool* pool, int i);
void run_tasks(StreamPool* pool, const float* const* inputs, float* const* outputs,
               std::size_t n_each, int tasks, int iterations, cudaStream_t stream);
