// Exercise ch02 / warp_divergence: the same work as a kernel whose even and odd threads take
// different branches, reorganised so that every warp takes only one branch.
//
// out[i] = even_branch(in[i]) when i is even, odd_branch(in[i]) when i is odd, for i in [0, n).
// The course's divergent_even_odd (warp_divergence_baseline.h) does this with one thread per
// element, so each warp runs both branches one after the other. Your warp_uniform_branches must
// produce exactly the same output with branches decided per warp, not per thread.
//
// Frozen API. in and out are device pointers to n unsigned ints (n >= 0; 0 does nothing;
// any n, not only multiples of 64). The work is enqueued on `stream`; the function returns
// without waiting.
#pragma once

#include <cuda_runtime.h>

// The two costly branches (course-owned): integer mixing rounds, so results are exact on the
// host and the device alike.
constexpr int kBranchRounds = 64;

__host__ __device__ inline unsigned even_branch(unsigned x) {
  for (int r = 0; r < kBranchRounds; ++r) {
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    x += 0x297a2d39u;
  }
  return x;
}

__host__ __device__ inline unsigned odd_branch(unsigned x) {
  for (int r = 0; r < kBranchRounds; ++r) {
    x ^= x << 7;
    x *= 0x9e3779b1u;
    x ^= x >> 13;
    x += 0x85ebca6bu;
  }
  return x;
}

void warp_uniform_branches(const unsigned* in, unsigned* out, int n, cudaStream_t stream);
