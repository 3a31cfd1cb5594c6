#pragma once

#include <vector>

// The two operations of barriers.h on the host, segment by segment.
std::vector<int> barriers_rotate_reference(const std::vector<int>& in);
std::vector<long long> barriers_segment_sum_reference(const std::vector<int>& in);
