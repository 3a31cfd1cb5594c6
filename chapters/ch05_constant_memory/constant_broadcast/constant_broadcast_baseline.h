// Course-owned code the constant_broadcast benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "constant_broadcast.h"

// The first version anyone writes: the whole curve in one __constant__ struct. The
// polynomial's reads are broadcasts; the segment reads are not: a warp whose 32 lanes fall in
// k different segments has each of the four coefficient loads replayed k times. Same launch
// shape as the course's solution (grid-stride, 256 threads, eight blocks per SM).
void constant_broadcast_serialised_set_curve(const ConstantBroadcastCurve& curve);
void constant_broadcast_serialised(const float* x, float* y, int n, cudaStream_t stream);

// x[i] in [0, 1), with the 32 values of every aligned group of 32 (one warp's elements in a
// grid-stride kernel) in one segment, picked by hashing the group's index with `seed`: the
// input on which the serialised kernel's segment reads become broadcasts too.
void constant_broadcast_fill_warp_uniform(float* x, std::size_t n, std::uint64_t seed,
                                          cudaStream_t stream);
