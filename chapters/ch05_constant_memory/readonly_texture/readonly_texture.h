// Exercise ch05 / readonly_texture: the two read-only paths into the SM besides constant
// memory. Part 1 gathers through the read-only (non-coherent) data path; part 2 resamples an
// image through a texture object, whose hardware does the bilinear filtering and the border
// handling.
//
// Frozen API: the tests and the benchmark call exactly these two functions.
#pragma once

#include <cuda_runtime.h>

// ---- Part 1: a gather through the read-only path --------------------------------------------
//
//   out[i] = src[indices[i]]  for 0 <= i < n.
//
// src, indices and out are device pointers; every indices[i] is a valid index of src, and out
// overlaps neither input. 0 <= n < 2^31; n = 0 does nothing. Nothing outside out[0, n) may be
// written, and src and indices must not be modified. The work is enqueued on `stream`; the
// function returns without waiting for it.
void readonly_gather(const float* src, const int* indices, float* out, int n,
                     cudaStream_t stream);

// ---- Part 2: bilinear resampling through a texture object -----------------------------------

// What a sample just outside the image reads: the nearest edge texel (clamp) or the texel on
// the opposite edge, as if the image repeated in both directions (wrap).
enum class ResampleAddress { kClamp, kWrap };

// `image` is a device pointer to width x height floats in row-major order (texel (i, j), column
// i of row j, at image[j * width + i]); `out` a device pointer to out_width x out_height floats,
// also row-major. Output pixel (x, y) is what tex2D<float> returns for a texture over the image
// with linear filtering, normalised coordinates and `address` in both dimensions, sampled at
//   u = (x + 0.5f) / out_width,  v = (y + 0.5f) / out_height   (computed in float),
// that is, with xB = u * width - 0.5, yB = v * height - 0.5, i = floor(xB), j = floor(yB),
// a = frac(xB) and b = frac(yB) (held by the hardware with 8 fractional bits):
//   out = (1-a)(1-b) T(i, j) + a(1-b) T(i+1, j) + (1-a)b T(i, j+1) + ab T(i+1, j+1),
// where T(i, j) is the texel at the column and row that `address` maps i and j to (clamp to
// [0, width - 1] and [0, height - 1], or wrap modulo width and height).
//
// Sizes: out_width and out_height in [0, 2^22] (so x + 0.5f is exact in float); when either is
// 0 nothing happens (image may then be null). Otherwise 1 <= width, height <= 32768.
// Nothing outside out[0, out_width * out_height) may be written, and `image` must not be
// modified. Every allocation the call makes is released before it returns, whatever happens.
//
// All GPU work goes on `stream`. Unlike part 1, this function returns only after that work has
// completed: it owns the texture object and the array behind it, and destroying them while its
// kernel may still be reading them is an error (cudaDestroyTextureObject does not wait).
void texture_resample(const float* image, int width, int height, float* out, int out_width,
                      int out_height, ResampleAddress address, cudaStream_t stream);
