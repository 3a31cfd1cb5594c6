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
// The course's workload (l2_persistence_baseline.cu) reads the hot region once per pass while
// streaming a big array eight times its size (float2 per hot float), so without a window the
// stream evicts the hot lines between passes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

void enable_persistence(cudaStream_t stream, const void* hot, std::size_t hot_bytes);
void disable_persistence(cudaStream_t stream);

// Course workload: partial[b] = the sum over block b's share of
// big[p * n_hot + i].x * hot[i] + big[p * n_hot + i].y, over all passes p < passes (the big
// array is passes * n_hot float2), swept `sweeps` times. `blocks` entries of partial.
void hot_stream_sum(const float2* big, const float* hot, std::size_t n_hot, int passes,
                    int sweeps, float* partial, int blocks, cudaStream_t stream);
// Device-side seeded fill of n floats in [-1, 1).
void fill_hash(float* data, std::size_t n, unsigned long long seed, cudaStream_t stream);
