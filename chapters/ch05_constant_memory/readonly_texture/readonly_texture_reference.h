// CPU references for both parts of readonly_texture.
#pragma once

#include <vector>

#include "course/compare.h"
#include "readonly_texture.h"

// out[i] = src[indices[i]]
std::vector<float> readonly_gather_reference(const std::vector<float>& src,
                                             const std::vector<int>& indices);

// What the texture unit computes for texture_resample (see readonly_texture.h): u and v in
// float as the kernel computes them, xB = u * width - 0.5 and yB = v * height - 0.5 in double,
// the weights a = frac(xB) and b = frac(yB) rounded to a multiple of 1/256 (the hardware's 9-bit
// fixed point with 8 fractional bits), texel indices clamped or wrapped, the sum in double.
std::vector<float> texture_resample_reference(const std::vector<float>& image, int width,
                                              int height, int out_width, int out_height,
                                              ResampleAddress address);

// How far a texture's output may lie from texture_resample_reference, for texels in [0, 1).
// The hardware keeps a and b to 1/256 but may truncate where the reference rounds, and it
// scales u and v by the size in its own arithmetic, so each weight may lie up to two steps of
// 1/256 from the reference's. A step moves the result by at most 1/256 times the difference of
// two neighbouring texels, at most 1 here, so two steps in each dimension make 4/256. A bug is
// far larger: sampling half an output pixel off, or the nearest texel instead of filtering,
// misses by up to half a texel difference, and the wrong address mode by up to a whole one at
// the borders.
inline constexpr course::Tolerance kResampleTolerance{0.0, 4.0 / 256};
