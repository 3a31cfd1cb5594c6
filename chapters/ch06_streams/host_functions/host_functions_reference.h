// CPU reference for equalise: the intensities an image of 8-bit levels equalises to.
#pragma once

#include <vector>

std::vector<float> equalise_reference(const std::vector<unsigned char>& pixels);

// The kLevels intensities the host step puts in scratch.host_lut for these pixels.
std::vector<float> equalise_table_reference(const std::vector<unsigned char>& pixels);
