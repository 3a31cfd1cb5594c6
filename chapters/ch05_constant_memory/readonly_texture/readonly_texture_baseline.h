// Course-owned code the readonly_texture benchmark compares against and fills its inputs with
// (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "course/device_random.h"
#include "readonly_texture.h"

// The same gather with ordinary loads: the kernel's pointers carry no __restrict__, so as far
// as the compiler knows `out` may alias `src`, and it must use coherent loads (plain LDG).
void readonly_texture_gather_plain(const float* src, const int* indices, float* out, int n,
                                   cudaStream_t stream);

// The same resample with the bilinear interpolation written out: four loads from the
// row-major image in global memory and the border handling done with index arithmetic, in
// full float precision (no 8-bit weights).
void readonly_texture_resample_manual(const float* image, int width, int height, float* out,
                                      int out_width, int out_height, ResampleAddress address,
                                      cudaStream_t stream);

// Gather indices with locality: indices[k] lies within `window` / 2 of k (clamped to
// [0, n)), chosen by hashing (k, seed), so host and device agree on every value.
__host__ __device__ inline int readonly_texture_window_index(std::size_t k, int n, int window,
                                                             std::uint64_t seed) {
  const long long offset =
      static_cast<long long>(course::hash_index(k, seed) % static_cast<std::uint64_t>(window)) -
      window / 2;
  const long long j = static_cast<long long>(k) + offset;
  return static_cast<int>(j < 0 ? 0 : (j >= n ? n - 1 : j));
}

// indices[k] = readonly_texture_window_index(k, n, window, seed) for k < n, on `stream`.
void readonly_texture_fill_window_indices(int* indices, int n, int window, std::uint64_t seed,
                                          cudaStream_t stream);
