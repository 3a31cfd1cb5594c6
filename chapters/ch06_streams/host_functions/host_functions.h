// Exercise ch06 / host_functions: a step of host work between two kernels, in stream order,
// without blocking the host thread.
//
// The job: histogram-equalise an 8-bit image into float intensities in [0, 1].
//   1. block_histograms_kernel (given): block k of kHistogramBlocks counts the levels of its
//      share of the pixels into scratch.block_histograms[k * kLevels + level];
//   2. those counts are copied to scratch.host_block_histograms (pinned host memory);
//   3. the host step: sum the blocks' counts into one histogram, accumulate it, and fill
//      scratch.host_lut[level] = equalised_intensity(level, cumulative, lowest, n) for every
//      level (cumulative: pixels at or below the level; lowest: the count of the lowest level
//      present);
//   4. scratch.host_lut is copied to scratch.lut (device memory);
//   5. apply_lut_kernel (given): intensities[i] = lut[pixels[i]].
//
// Frozen API.
//
//   equalise(pixels, intensities, n, scratch, stream)
//     enqueues the five steps on `stream`, in that order, and returns without waiting: the
//     host step runs as a host function (cudaLaunchHostFunc), which the stream calls once the
//     copy before it has finished and which holds back the copy after it until it returns.
//     No cudaDeviceSynchronize, cudaStreamSynchronize or cudaEventSynchronize, nothing on the
//     default stream. pixels: n bytes and intensities: n floats, both in device memory;
//     0 < n < 2^32, or n == 0 (do nothing).
//
//   The host function must not call CUDA (no runtime or driver call at all: the stream that
//   calls it is waiting for it, and such a call may deadlock or fail). It gets one pointer,
//   userData: make it point at what the host step needs, in memory that lives until the host
//   function has run, which is after equalise returns. `scratch` itself (the struct) may be
//   gone or changed by then, and equalise may be called again before the first call's work
//   has run, so neither a pointer to `scratch` nor a static variable will do; a context made
//   with `new` that the host function deletes will. It has one gap: after an error in the CUDA
//   context (a sticky one, such as a kernel's illegal address), a host function enqueued with
//   cudaLaunchHostFunc is never called (unlike a cudaStreamAddCallback callback, which runs
//   once in any case and is handed the error), so its context is never deleted: it leaks. Such
//   an error leaves the process unable to use CUDA until it is relaunched, which is why this
//   exercise accepts the leak; code that must free everything on every path keeps the context
//   where its owner can free it, or uses cudaStreamAddCallback.
//
//   The buffers a scratch names may serve calls one after another on one stream (each call's
//   work is stream-ordered after the previous call's); calls that may run at the same time
//   need a scratch each.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

inline constexpr int kLevels = 256;
inline constexpr int kHistogramBlocks = 128;

struct EqualiseScratch {
  unsigned int* block_histograms;       // device: kHistogramBlocks * kLevels counts
  unsigned int* host_block_histograms;  // pinned host: the same counts, copied back
  float* host_lut;                      // pinned host: kLevels intensities, the host step's
  float* lut;                           // device: kLevels intensities, copied from host_lut
};

// The intensity that `level` maps to, given `cumulative` (pixels at or below it), `lowest`
// (the count of the lowest level present) and `total` (all pixels). An image of one level only
// is left as it is (level / 255). Use it as it is, so that your intensities match the CPU
// reference bit for bit.
inline float equalised_intensity(int level, std::uint64_t cumulative, std::uint64_t lowest,
                                 std::uint64_t total) {
  if (total == lowest) return static_cast<float>(level) / 255.0f;
  if (cumulative < lowest) return 0.0f;  // below every level present: never looked up
  return static_cast<float>(static_cast<double>(cumulative - lowest) /
                            static_cast<double>(total - lowest));
}

void equalise(const unsigned char* pixels, float* intensities, std::size_t n,
              const EqualiseScratch& scratch, cudaStream_t stream);
