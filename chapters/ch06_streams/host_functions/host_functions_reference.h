// CPU reference for equalise: the intensities an image of 8-bit levels equalises to.
#pragma once

#include <vector>

std::vector<float> equalise_reference(const std::vector<unsigned char>& pixels);
