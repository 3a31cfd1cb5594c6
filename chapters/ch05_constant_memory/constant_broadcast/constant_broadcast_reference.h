// CPU reference and seeded curves for the constant_broadcast tests and benchmark.
#pragma once

#include <random>
#include <vector>

#include "constant_broadcast.h"

// The curve at x in the order the header gives, in float with std::fma (correctly rounded,
// like the GPU's fmaf), so a kernel that follows that order matches it bit for bit.
float constant_broadcast_reference_at(const ConstantBroadcastCurve& curve, float x);
std::vector<float> constant_broadcast_reference(const ConstantBroadcastCurve& curve,
                                                const std::vector<float>& x);

// Every coefficient drawn from [-1, 1): neighbouring segments are unrelated, so an element
// evaluated on the wrong segment (or with a stale table) is off by far more than the tolerance.
ConstantBroadcastCurve constant_broadcast_random_curve(std::mt19937_64& rng);

// The segment an input value falls in (after clamping to the end segments).
int constant_broadcast_segment_of(float x);
