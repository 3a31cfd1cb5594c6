#include "barriers_reference.h"

#include <algorithm>
#include <cstddef>

#include "barriers.h"

std::vector<int> barriers_rotate_reference(const std::vector<int>& in) {
  std::vector<int> out(in.size());
  for (std::size_t start = 0; start < in.size(); start += kBarrierSegment) {
    const std::size_t len = std::min<std::size_t>(kBarrierSegment, in.size() - start);
    for (std::size_t t = 0; t < len; ++t) out[start + t] = in[start + (t + 1) % len];
  }
  return out;
}

std::vector<long long> barriers_segment_sum_reference(const std::vector<int>& in) {
  std::vector<long long> out(in.size());
  for (std::size_t start = 0; start < in.size(); start += kBarrierSegment) {
    const std::size_t len = std::min<std::size_t>(kBarrierSegment, in.size() - start);
    long long sum = 0;
    for (std::size_t t = 0; t < len; ++t) sum += in[start + t];
    for (std::size_t t = 0; t < len; ++t) out[start + t] = sum;
  }
  return out;
}
