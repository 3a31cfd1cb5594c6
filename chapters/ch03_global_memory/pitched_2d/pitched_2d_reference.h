#pragma once

#include <vector>

// out(r, c) = in(r, w - 1 - c) + in(h - 1 - r, c) on tightly packed rows.
std::vector<float> mirror_sum_reference(const std::vector<float>& in, int width, int height);
