#include "async_copy.h"

#include <cuda/pipeline>

#include <algorithm>
#include <cstdint>

#include "course/check.h"
#include "course/device.h"

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 2048;  // outputs per tile: eight per thread
constexpr int kR = kAsyncCopyRadius;
constexpr int kSpan = kTile + 2 * kR;  // a tile and its halo on both sides
constexpr int kStages = 4;             // shared buffers: up to three tiles in flight
// A buffer holds whole 16-byte chunks starting at the 16-byte boundary at or below the span's
// first element: that boundary lies 0-3 floats before it, so one chunk more than the span.
constexpr int kChunks = kSpan / 4 + 1;
constexpr int kBufFloats = 4 * kChunks;
static_assert(kSpan % 4 == 0 && kTile % 4 == 0 && kR % 4 == 0,
              "every tile's span must start at the same offset from a 16-byte boundary");
static_assert(kStages * kBufFloats * sizeof(float) <= 48 * 1024,
              "static shared memory is limited to 48 KiB per block");

}  // namespace

// Each block walks tiles blockIdx.x, blockIdx.x + gridDim.x, ... (its k-th tile goes to buffer
// k % kStages). While it computes one tile, the copies of its next kStages - 1 tiles are in
// flight.
__global__ void __launch_bounds__(kThreads)
    async_copy_kernel(const float* __restrict__ in, float* __restrict__ out, int n,
                      int num_tiles) {
  // @begin-solution: kStages shared buffers of kBufFloats floats (alignas(16)) and a
  // @hint: per-thread pipeline, cuda::make_pipeline() (no arguments: cp.async groups, no shared
  // @hint: barriers). Buffer element j holds in[base + j], where base = tile * kTile - kR - mis
  // @hint: and mis = (address of in / 4) % 4, so that in + base is 16-byte aligned. To stage a
  // @hint: tile, thread t takes chunks c = t, t + kThreads, ... < kChunks: when the chunk's four
  // @hint: elements all lie in [0, n), cuda::memcpy_async(dst + 4c, in + base + 4c,
  // @hint: cuda::aligned_size_t<16>(16), pipe); otherwise fill them with ordinary loads, 0
  // @hint: outside [0, n); then producer_commit(). Stage the block's first kStages - 1 tiles;
  // @hint: per tile: consumer_wait() (this thread's copies have landed), __syncthreads() (so
  // @hint: have everyone's, and everyone has finished reading the previous tile's buffer),
  // @hint: stage the tile kStages - 1 ahead into that buffer, compute out[i] for i < n from
  // @hint: buf[e + kR + d + mis] (e = i - tile * kTile), consumer_release().
  __shared__ alignas(16) float buf[kStages][kBufFloats];
  auto pipe = cuda::make_pipeline();  // thread scope: this thread's copies only

  // Floats between the 16-byte boundary at or below `in` and `in` (in is float-aligned).
  const int mis = static_cast<int>((reinterpret_cast<std::uintptr_t>(in) / sizeof(float)) % 4);
  // The block's k-th tile, and how many tiles it has (at least one: gridDim.x <= num_tiles).
  const int block = static_cast<int>(blockIdx.x), grid = static_cast<int>(gridDim.x);
  const auto tile_of = [&](int k) { return block + k * grid; };
  const int my_tiles = (num_tiles - block + grid - 1) / grid;

  // This thread's part of staging a tile into buf[slot]: buf[slot][j] = in[base + j], 0 outside
  // [0, n). in + base is 16-byte aligned, so chunk c (elements 4c .. 4c + 3) is one 16-byte copy.
  const auto stage = [&](int tile, int slot) {
    const long long base = static_cast<long long>(tile) * kTile - kR - mis;
    float* dst = buf[slot];
    pipe.producer_acquire();
    for (int c = threadIdx.x; c < kChunks; c += kThreads) {
      const long long g = base + 4 * c;
      if (g >= 0 && g + 4 <= n) {
        cuda::memcpy_async(dst + 4 * c, in + g, cuda::aligned_size_t<16>(16), pipe);
      } else {  // a chunk across an end of the array (only in the end tiles)
#pragma unroll
        for (int k = 0; k < 4; ++k)
          dst[4 * c + k] = (g + k >= 0 && g + k < n) ? in[g + k] : 0.0f;
      }
    }
    pipe.producer_commit();
  };

  for (int k = 0; k < kStages - 1 && k < my_tiles; ++k) stage(tile_of(k), k);
  for (int k = 0; k < my_tiles; ++k) {
    const int slot = k % kStages;
    pipe.consumer_wait();  // this thread's copies of tile k have landed
    // Read-after-write: every thread's copies (and plain stores) of tile k are now visible to
    // the block. Write-after-read: every thread has finished computing tile k - 1, so its
    // buffer, (k + kStages - 1) % kStages, may be refilled.
    __syncthreads();
    if (k + kStages - 1 < my_tiles) stage(tile_of(k + kStages - 1), (k + kStages - 1) % kStages);

    const long long first = static_cast<long long>(tile_of(k)) * kTile;
    const float* b = buf[slot] + kR + mis;  // b[e + d] holds in[first + e + d]
    for (int e = threadIdx.x; e < kTile; e += kThreads) {
      const long long i = first + e;
      if (i >= n) break;
      float sum = 0.0f;
#pragma unroll
      for (int d = -kR; d <= kR; ++d)
        sum += static_cast<float>(kR + 1 - (d < 0 ? -d : d)) * b[e + d];
      out[i] = sum * (1.0f / 25.0f);
    }
    pipe.consumer_release();
  }
  // @skeleton: (void)in; (void)out; (void)n; (void)num_tiles;
  // @end-solution
}

void async_copy(const float* in, float* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  const int num_tiles = (n + kTile - 1) / kTile;
  // @begin-solution: One block of kThreads per tile of kTile outputs, but no more blocks than
  // @hint: fit on the GPU at once (course::sm_count() x
  // @hint: cudaOccupancyMaxActiveBlocksPerMultiprocessor): each
  // @hint: block then loops over many tiles, which is what gives the pipeline something to
  // @hint: overlap; launch on `stream`, then CUDA_CHECK_LAUNCH().
  // Queried once: how many blocks are resident at once. Preferring shared memory over L1 (the
  // copies bypass L1 anyway) lets more of the blocks' 32 KiB buffers fit on an SM.
  static const int resident = [] {
    int per_sm = 0;
    CUDA_CHECK(cudaFuncSetAttribute(async_copy_kernel,
                                    cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, async_copy_kernel,
                                                             kThreads, 0));
    return course::sm_count() * std::max(per_sm, 1);
  }();
  const int blocks = std::min(num_tiles, resident);
  async_copy_kernel<<<blocks, kThreads, 0, stream>>>(in, out, n, num_tiles);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)num_tiles; (void)stream;
  // @end-solution
}
