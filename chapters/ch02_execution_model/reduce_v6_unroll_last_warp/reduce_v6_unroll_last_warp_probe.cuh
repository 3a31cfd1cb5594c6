// Course-owned probe of warp_reduce_last under independent thread scheduling, compiled in the
// student's translation unit (reduce_v6_unroll_last_warp.h includes it there, and only there)
// so that each branch below gets its own inlined copy of warp_reduce_last.
//
// Why not a separate course file calling it across translation units (rdc)? That was measured
// on an H100: the two branches then call one out-of-line function, the warp reconverges at
// its entry, and lockstep-only code (volatile without __syncwarp) passed every probe case.
// Inlined copies at two call sites keep the lanes apart, and the same code fails.
#pragma once

#include "reduce_v6_unroll_last_warp_probe.h"

#include "course/check.h"
#include "reduce_v6_unroll_last_warp.h"

namespace {

__device__ void spin(long long cycles) {
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

}  // namespace

void probe_warp_reduce_last(const long long* values, const unsigned* masks, int trials,
                            long long spin_cycles, long long* sums, cudaStream_t stream) {
  if (trials <= 0) return;
  probe_kernel<<<trials, 32, 0, stream>>>(values, masks, spin_cycles, sums);
  CUDA_CHECK_LAUNCH();
}
