#include "host_functions_reference.h"

#include <cstdint>

#include "host_functions.h"

std::vector<float> equalise_table_reference(const std::vector<unsigned char>& pixels) {
  std::uint64_t histogram[kLevels] = {};
  for (const unsigned char level : pixels) ++histogram[level];
  std::uint64_t lowest = 0;
  for (int level = 0; level < kLevels && lowest == 0; ++level) lowest = histogram[level];
  std::vector<float> lut(kLevels);
  std::uint64_t cumulative = 0;
  for (int level = 0; level < kLevels; ++level) {
    cumulative += histogram[level];
    lut[level] = equalised_intensity(level, cumulative, lowest, pixels.size());
  }
  return lut;
}

std::vector<float> equalise_reference(const std::vector<unsigned char>& pixels) {
  const std::vector<float> lut = equalise_table_reference(pixels);
  std::vector<float> out(pixels.size());
  for (std::size_t i = 0; i < pixels.size(); ++i) out[i] = lut[pixels[i]];
  return out;
}
