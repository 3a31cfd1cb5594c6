// Exercise ch03 / l2_persistence (compute capability 8.0+): keep a hot region in L2 while a
// large array streams past it.
//
// Frozen API.
//
//   enable_persistence(stream, hot, hot_bytes)
//       Reserves an L2 set-aside for persisting lines (cudaDeviceSetLimit with
//       cudaLimitPersistingL2CacheSize, at most the device's persistingL2CacheMaxSize) and
//       sets an access policy window on `stream` (cudaStreamSetAttribute with
//       cudaStreamAttributeAccessPolicyWindow): base_ptr = hot, num_bytes = hot_bytes capped
//       at accessPolicyMaxWindowSize, hitProp = cudaAccessPropertyPersisting, missProp =
//       cudaAccessPropertyStreaming, hitRatio in (0, 1] chosen so that hitRatio * num_bytes
//       does not exceed the set-aside (so the persisting lines do not thrash each other).
//   disable_persistence(stream)
//       Undoes all of it so later work is not favoured: waits for the work on `stream` (the
//       reset below is not stream-ordered), sets a window of num_bytes = 0 on `stream`,
//       returns persisting lines to normal with cudaCtxResetPersistingL2Cache and sets the
//       set-aside back to 0.
//
// The course's workload (l2_persistence_baseline.cu) streams a big array through L2 while it
// gathers scattered sectors of the hot region; between two reads of the same hot sector the
// stream moves several times the L2's size, so without a window the hot lines are evicted and
// every gather misses, and with one they stay in the set-aside and hit.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

void enable_persistence(cudaStream_t stream, const void* hot, std::size_t hot_bytes);
void disable_persistence(cudaStream_t stream);

// Course workload, `sweeps` times over `big` (n_big float4, read once per sweep in order):
// every `loads_per_gather` float4 of it are paired with one read of `hot`, the first float of
// a 32-byte sector, the n_hot / 8 sectors taken in a fixed scattered order that visits all of
// them before repeating. Each thread adds, per gather, (the sum of the components of its
// float4) * (the gathered float); partial[b] = block b's total, in a fixed order, so the result
// is the same in every run. `blocks` entries of partial; blocks of 256 threads.
void hot_stream_sum(const float4* big, std::size_t n_big, const float* hot, std::size_t n_hot,
                    int loads_per_gather, int sweeps, float* partial, int blocks,
                    cudaStream_t stream);
