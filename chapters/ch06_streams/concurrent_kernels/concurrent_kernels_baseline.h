// Course-owned GPU code for concurrent_kernels.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// The tasks of run_tasks one after another on `stream`, one block of kTaskThreads threads
// each: what they get on a single stream, and on the legacy default stream whatever streams
// the caller meant.
void serial_tasks(const float* const* inputs, float* const* outputs, std::size_t n_each,
                  int tasks, int iterations, cudaStream_t stream);
