#pragma once

#include <vector>

std::vector<float> vector_add_reference(const std::vector<float>& a, const std::vector<float>& b);
