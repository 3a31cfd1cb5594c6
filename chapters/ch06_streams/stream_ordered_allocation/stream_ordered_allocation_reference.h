// CPU reference for stream_ordered_allocation (course code, for the tests and the benchmark).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

// out for `in` cut at `offsets` (offsets.front() == 0, offsets.back() == in.size()): each
// chunk's elements mixed, then each paired with its mirror in the chunk.
std::vector<std::uint32_t> chunks_reference(const std::vector<std::uint32_t>& in,
                                            const std::vector<std::size_t>& offsets);
