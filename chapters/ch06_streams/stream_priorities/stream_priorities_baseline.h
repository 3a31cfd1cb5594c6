// Course-owned GPU code for the stream_priorities benchmark.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// The long background work: a kernel of `blocks` blocks of kBackgroundThreads threads, each
// thread a chain of `steps` dependent FMAs, so every block lasts about as long as every other.
// Block 0 sets *started (page-locked host memory) to 1 as it starts, so the host can tell the
// kernel is running; *sink is written only by a result that never happens (the work cannot
// be optimised away).
constexpr int kBackgroundThreads = 256;
void launch_background(int blocks, int steps, int* started, float* sink, cudaStream_t stream);

// How many background blocks the whole device holds at once: one wave.
int background_wave_blocks();

// submit_urgent's work done by the course: out[i] = urgent_response(in[i]) with one thread per
// element, blocks of 256, on `stream`.
void urgent_baseline(const float* in, float* out, std::size_t n, cudaStream_t stream);
