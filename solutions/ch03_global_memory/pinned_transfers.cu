#include "pinned_transfers.h"

#include <algorithm>
#include <cstring>

#include "course/check.h"

float* alloc_pinned(std::size_t count) {
  if (count == 0) return nullptr;
  // @begin-solution: Page-locked memory comes from cudaMallocHost (or cudaHostAlloc with
  // @hint: cudaHostAllocDefault). Check the call with CUDA_CHECK.
  float* pointer = nullptr;
  CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pointer), count * sizeof(float)));
  return pointer;
  // @skeleton: return nullptr;
  // @end-solution
}

void free_pinned(float* pointer) {
  // @begin-solution: Release it with the matching call (cudaFreeHost accepts nullptr).
  if (pointer != nullptr) CUDA_CHECK(cudaFreeHost(pointer));
  // @skeleton: (void)pointer;
  // @end-solution
}

void round_trip(const float* src, float* dev, float* dst, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  // @begin-solution: Two cudaMemcpyAsync calls on `stream`: host->device, then device->host.
  // @hint: The stream keeps them in order; do not synchronise here.
  CUDA_CHECK(cudaMemcpyAsync(dev, src, n * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(dst, dev, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  // @skeleton: (void)src; (void)dev; (void)dst; (void)stream;
  // @end-solution
}

void staged_upload(const float* src, float* dev, std::size_t n, float* staging,
                   std::size_t staging_count, cudaStream_t stream) {
  if (n == 0) return;
  // @begin-solution: Split staging into two halves. For each chunk: wait until the copy
  // @hint: that last used this half has finished (an event recorded after it), memcpy the
  // @hint: chunk into the half, cudaMemcpyAsync it to dev, record the half's event. The host
  // @hint: then fills one half while the copy engine drains the other. Synchronise at the end.
  const std::size_t half = staging_count / 2;
  cudaEvent_t done[2];
  CUDA_CHECK(cudaEventCreateWithFlags(&done[0], cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&done[1], cudaEventDisableTiming));
  // Recorded once so the first wait on each half returns at once.
  CUDA_CHECK(cudaEventRecord(done[0], stream));
  CUDA_CHECK(cudaEventRecord(done[1], stream));
  int slot = 0;
  for (std::size_t first = 0; first < n; first += half, slot ^= 1) {
    const std::size_t count = std::min(half, n - first);
    float* buffer = staging + slot * half;
    CUDA_CHECK(cudaEventSynchronize(done[slot]));
    std::memcpy(buffer, src + first, count * sizeof(float));
    CUDA_CHECK(cudaMemcpyAsync(dev + first, buffer, count * sizeof(float),
                               cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaEventRecord(done[slot], stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaEventDestroy(done[0]);
  cudaEventDestroy(done[1]);
  // @skeleton: (void)src; (void)dev; (void)staging; (void)staging_count; (void)stream;
  // @end-solution
}
