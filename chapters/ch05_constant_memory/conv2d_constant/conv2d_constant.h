// Exercise ch05 / conv2d_constant: filter a 2D image with a square mask held in constant
// memory, with clamped borders.
//
// Frozen API: the tests and the benchmark call exactly this.
//
// conv2d_constant_set_mask(mask, radius): mask points to (2 * radius + 1)^2 floats in host
// memory, row-major: mask[(dy + radius) * (2 * radius + 1) + (dx + radius)] is the weight of the
// pixel dx columns right of and dy rows below the output pixel. 1 <= radius <=
// kConv2dConstantMaxRadius. Copy the weights into your own __constant__ array, sized for the
// largest mask (kConv2dConstantMaxTaps floats), with cudaMemcpyToSymbol, and return only once
// they are in device memory, so that a kernel enqueued afterwards on any stream, including a
// non-blocking one, reads them. The caller may reuse `mask` as soon as the call returns. The
// mask stays in force until the next set call, which the caller never makes while a
// conv2d_constant kernel may still be running (constant memory is one copy for the device).
// Setting the mask is your function because a __constant__ variable belongs to the translation
// unit that declares it: the course's code, compiled separately without relocatable device
// code, cannot name your symbol.
//
// conv2d_constant(in, out, width, height, radius, stream): `in` and `out` are device pointers to
// width x height images, row-major (pixel (x, y) at [y * width + x]), float-aligned, not
// overlapping. For every pixel, with r = radius,
//   out(x, y) = sum over dy = -r..r, dx = -r..r of
//               mask[(dy + r) * (2r + 1) + (dx + r)] * in(clamp(x + dx, 0, width - 1),
//                                                       clamp(y + dy, 0, height - 1)),
// a correlation (the mask is not flipped, as in most image filters and in CNN layers), where a
// pixel outside the image takes the value of the nearest edge pixel. `radius` must be the radius
// of the last conv2d_constant_set_mask call (precondition: the tests never pass another, and
// the result of a call that does is unspecified). Accumulate in float; the suggested order is
// dy outer, dx inner, both ascending, one fused multiply-add per term, and the tests accept any
// order (their reference is computed in double, with a tolerance that grows with the mask).
// width and height are 0 (do nothing) to 2^20 each, with width * height < 2^31. Nothing outside
// out[0, width * height) may be written and `in` must not be modified. The work is enqueued on
// `stream`; the function returns without waiting for it.
#pragma once

#include <cuda_runtime.h>

constexpr int kConv2dConstantMaxRadius = 7;
constexpr int kConv2dConstantMaxTaps =
    (2 * kConv2dConstantMaxRadius + 1) * (2 * kConv2dConstantMaxRadius + 1);  // 225

void conv2d_constant_set_mask(const float* mask, int radius);
void conv2d_constant(const float* in, float* out, int width, int height, int radius,
                     cudaStream_t stream);
