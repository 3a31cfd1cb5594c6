// Exercise ch06 / overlap_pipeline: hide the host<->device copies behind the computation.
// Done one after the other on one stream (upload everything, compute everything, download
// everything), the copy engines idle while the SMs work and the SMs idle while the copies
// run. Cut the array into chunks and give each chunk its own upload -> kernel -> download on
// one of several streams: while chunk c computes, chunk c + 1 uploads and chunk c - 1
// downloads, on the GPU's separate engines for each copy direction.
//
// Frozen API: the tests and the benchmark call exactly this.
//
//   alloc_host(n)    host memory for n floats, for run_pipeline's host_in and host_out;
//                    nullptr for n == 0. Only page-locked memory lets a copy run
//                    asynchronously, at full speed and beside a kernel: choose accordingly.
//   free_host(p)     releases what alloc_host returned; accepts nullptr.
//   run_pipeline(host_in, host_out, dev_in, dev_out, n, iterations, chunks, workers,
//                num_workers, stream)
//       for every i in [0, n):
//           dev_in[i]   = host_in[i]
//           dev_out[i]  = pipeline_transform(host_in[i], iterations)
//           host_out[i] = dev_out[i]
//       host_in and host_out come from alloc_host, dev_in and dev_out are device arrays of
//       n floats; none of the four overlaps another. host_in must not be modified, and
//       nothing outside [0, n) of the other three may be written.
//       Split [0, n) into `chunks` contiguous chunks (sizes differing by at most one; with
//       chunks > n some are empty and need no work). Chunk c belongs to the stream
//       workers[c % num_workers], and that stream does all of the chunk's work, in order:
//       copy the chunk host_in -> dev_in, run a kernel on it (dev_in -> dev_out), copy it
//       dev_out -> host_out. n >= 0 (0 does nothing), iterations >= 0, chunks >= 1,
//       num_workers >= 1 (it may exceed chunks). The workers are distinct non-blocking
//       streams the caller created; `stream` is the caller's stream and is not among them.
//       Behave, seen from `stream`, like one operation enqueued on it:
//         * fork: no chunk's work starts before the work already enqueued on `stream`
//           (record an event on `stream`, make each worker you use cudaStreamWaitEvent on it);
//         * join: everything enqueued on `stream` after the call starts after every chunk's
//           work has finished (record an event on each worker after its last operation,
//           make `stream` wait on each);
//         * return without waiting: no cudaDeviceSynchronize, cudaStreamSynchronize or
//           cudaEventSynchronize, no synchronous cudaMemcpy, nothing on the default stream.
//       The events for the fork and the join may be created in the call and destroyed right
//       after they are used (the resources of an event still pending are released once it
//       completes).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

// kPipelineOffset = 127/64 - (127/64)^2, so 127/64 is a fixed point of x <- x * x +
// kPipelineOffset: for |x| <= 127/64 the exact x * x + kPipelineOffset lies in
// [kPipelineOffset, 127/64], both ends are floats, and the correctly rounded fmaf stays there.
constexpr float kPipelineOffset = -8001.0f / 4096.0f;  // exact in float

// One element's work (course-owned; your kernel calls it): `iterations` steps of
// x <- x * x + kPipelineOffset, each one fused multiply-add, so the host and the device round
// identically and the tests compare exactly. Inputs in [-1, 1] stay finite for any number of
// steps (see kPipelineOffset). The map is chaotic: the result depends on every step, and no
// shortcut gives the same bits.
__host__ __device__ inline float pipeline_transform(float x, int iterations) {
  for (int step = 0; step < iterations; ++step) x = fmaf(x, x, kPipelineOffset);
  return x;
}

float* alloc_host(std::size_t n);
void free_host(float* p);
void run_pipeline(const float* host_in, float* host_out, float* dev_in, float* dev_out,
                  std::size_t n, int iterations, int chunks, const cudaStream_t* workers,
                  int num_workers, cudaStream_t stream);
