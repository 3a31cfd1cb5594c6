// Course-owned workload the benchmark and tests run with and without persistence; not part of
// the student's API.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// Course workload, `sweeps` times over `big` (n_big float4, read once per sweep in order):
// every `loads_per_gather` float4 of it are paired with one read of `hot`, the first float of
// a 32-byte sector, the n_hot / 8 sectors taken in a fixed scattered order that visits all of
// them before repeating. Each thread adds, per gather, (the sum of the components of its
// float4) * (the gathered float); partial[b] = block b's total, in a fixed order, so the result
// is the same in every run. `blocks` entries of partial; blocks of 256 threads.
void hot_stream_sum(const float4* big, std::size_t n_big, const float* hot, std::size_t n_hot,
                    int loads_per_gather, int sweeps, float* partial, int blocks,
                    cudaStream_t stream);
