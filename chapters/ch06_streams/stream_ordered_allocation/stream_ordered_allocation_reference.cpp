#include "stream_ordered_allocation_reference.h"

#include "stream_ordered_allocation.h"

std::vector<std::uint32_t> chunks_reference(const std::vector<std::uint32_t>& in,
                                            const std::vector<std::size_t>& offsets) {
  std::vector<std::uint32_t> out(in.size());
  std::vector<std::uint32_t> mixed;
  for (std::size_t c = 0; c + 1 < offsets.size(); ++c) {
    const std::size_t first = offsets[c];
    const std::size_t count = offsets[c + 1] - first;
    mixed.resize(count);
    for (std::size_t i = 0; i < count; ++i) mixed[i] = chunk_mix(in[first + i]);
    for (std::size_t i = 0; i < count; ++i)
      out[first + i] = chunk_pair(mixed[i], mixed[count - 1 - i]);
  }
  return out;
}
