// Course-owned code the overlap_pipeline benchmark compares against and calibrates with (not
// student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// dev_out[i] = pipeline_transform(dev_in[i], iterations) for i in [0, n): the course's own
// kernel, with the solution's launch shape, on `stream`. Returns without waiting.
void overlap_pipeline_course_transform(const float* dev_in, float* dev_out, std::size_t n,
                                       int iterations, cudaStream_t stream);

// The version without overlap, everything on `stream`: all of host_in -> dev_in, the course's
// kernel over all of it, all of dev_out -> host_out. host_in and host_out are page-locked.
// Returns without waiting.
void overlap_pipeline_sequential(const float* host_in, float* host_out, float* dev_in,
                                 float* dev_out, std::size_t n, int iterations,
                                 cudaStream_t stream);
