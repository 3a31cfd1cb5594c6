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
// The course's workload (l2_persistence_baseline.h/.cu) streams a big array through L2 while it
// gathers scattered sectors of the hot region; between two reads of the same hot sector the
// stream moves several times the L2's size, so without a window the hot lines are evicted and
// every gather misses, and with one they stay in the set-aside and hit.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

void enable_persistence(cudaStream_t stream, const void* hot, std::size_t hot_bytes);
void disable_persistence(cudaStream_t stream);
