#pragma once

#include <vector>

#include "course/compare.h"

// The filtered pixel (x, y) of a width x height image, in double: the sum over dy, dx in
// [-radius, radius] of mask[(dy + radius) * (2 * radius + 1) + dx + radius] times the input
// pixel at (x + dx, y + dy), each coordinate clamped into the image.
double conv2d_constant_reference_at(const std::vector<float>& in, int width, int height,
                                    const std::vector<float>& mask, int radius, int x, int y);

// Every pixel of the filtered image, row-major.
std::vector<float> conv2d_constant_reference(const std::vector<float>& in, int width, int height,
                                             const std::vector<float>& mask, int radius);

// What a float kernel may differ from the double reference by, for inputs and weights in
// [-1, 1]: rounding grows with the number of terms, (2 * radius + 1)^2.
course::Tolerance conv2d_constant_tolerance(int radius);
