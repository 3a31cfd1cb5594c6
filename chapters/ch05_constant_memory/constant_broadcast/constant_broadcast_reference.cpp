#include "constant_broadcast_reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "course/parallel.h"

int constant_broadcast_segment_of(float x) {
  const float u = x * static_cast<float>(kConstantBroadcastSegments);
  return std::clamp(static_cast<int>(std::floor(u)), 0, kConstantBroadcastSegments - 1);
}

float constant_broadcast_reference_at(const ConstantBroadcastCurve& curve, float x) {
  float p = curve.polynomial[kConstantBroadcastTerms - 1];
  for (int k = kConstantBroadcastTerms - 2; k >= 0; --k) p = std::fma(p, x, curve.polynomial[k]);

  const int s = constant_broadcast_segment_of(x);
  const float t = x * static_cast<float>(kConstantBroadcastSegments) - static_cast<float>(s);
  const float* a = curve.segments[s];
  const float r = std::fma(std::fma(std::fma(a[3], t, a[2]), t, a[1]), t, a[0]);
  return p + r;
}

std::vector<float> constant_broadcast_reference(const ConstantBroadcastCurve& curve,
                                                const std::vector<float>& x) {
  std::vector<float> y(x.size());
  // The cores share the values (a benchmark's 2^24 of them, each ten fmas done by libm).
  course::parallel_chunks(x.size(), 1 << 16, [&](std::size_t, std::size_t begin,
                                                 std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) y[i] = constant_broadcast_reference_at(curve, x[i]);
  });
  return y;
}

ConstantBroadcastCurve constant_broadcast_random_curve(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> coefficient(-1.0f, 1.0f);
  ConstantBroadcastCurve curve{};
  for (float& p : curve.polynomial) p = coefficient(rng);
  for (auto& segment : curve.segments)
    for (float& a : segment) a = coefficient(rng);
  return curve;
}
