// Course-owned probe of warp_reduce_last under independent thread scheduling. Included by
// reduce_v6_unroll_last_warp.h in CUDA translation units only, so it is compiled once, in your
// reduce_v6_unroll_last_warp.cu, next to your warp_reduce_last. Do not include it elsewhere.
#pragma once

#include "course/check.h"

namespace reduce_v6_probe {

__device__ inline void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Each branch calls warp_reduce_last at its own call site, with the spin on opposite sides, so
// the compiler can neither merge the two calls nor predicate the branches (each holds a loop):
// the warp really diverges, and on Volta and later the two groups of lanes run as separate
// paths. Code that is only correct in lockstep then reads values not yet written.
__global__ void probe_kernel(const long long* values, const unsigned* masks, long long spin_cycles,
                             long long* sums) {
  __shared__ long long s[64];
  const unsigned lane = threadIdx.x;
  const long long* mine = values + 64 * static_cast<long long>(blockIdx.x);
  s[lane] = mine[lane];
  s[lane + 32] = mine[lane + 32];
  __syncthreads();
  if ((masks[blockIdx.x] >> lane) & 1u) {
    spin(spin_cycles);
    warp_reduce_last(s, lane);
  } else {
    warp_reduce_last(s, lane);
    spin(spin_cycles);
  }
  __syncthreads();
  if (lane == 0) sums[blockIdx.x] = s[0];
}

}  // namespace reduce_v6_probe

void probe_warp_reduce_last(const long long* values, const unsigned* masks, int trials,
                            long long spin_cycles, long long* sums, cudaStream_t stream) {
  if (trials <= 0) return;
  reduce_v6_probe::probe_kernel<<<trials, 32, 0, stream>>>(values, masks, spin_cycles, sums);
  CUDA_CHECK_LAUNCH();
}
