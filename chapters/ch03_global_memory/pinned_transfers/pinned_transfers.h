// Exercise ch03 / pinned_transfers: host <-> device copies through page-locked memory.
//
// Frozen API.
//
//   alloc_pinned(count)   page-locked host memory for `count` floats (cudaMallocHost or
//                         cudaHostAlloc); nullptr for count == 0. free_pinned releases it.
//   round_trip(src, dev, dst, n, stream)
//                         enqueues on `stream`: n floats from host `src` to device `dev`, then
//                         from `dev` back to host `dst`; returns without waiting. src and dst
//                         come from alloc_pinned, so the copies can be asynchronous DMA.
//   staged_upload(src, dev, n, staging, staging_count, stream)
//                         copies n floats from ordinary (pageable) host memory `src` to device
//                         `dev` through the pinned buffer `staging` (staging_count floats, at
//                         least 2): the host copies a chunk into staging, the GPU's copy
//                         engine moves it on `stream`. Returns once all n floats are on the
//                         device (staging may be reused by the caller afterwards).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

float* alloc_pinned(std::size_t count);
void free_pinned(float* pointer);
void round_trip(const float* src, float* dev, float* dst, std::size_t n, cudaStream_t stream);
void staged_upload(const float* src, float* dev, std::size_t n, float* staging,
                   std::size_t staging_count, cudaStream_t stream);
