// The in-run baseline of atomic_scopes' benchmark, and its one-bin input.
#include "atomic_scopes_baseline.h"

#include <cstddef>

#include "atomic_scopes.h"
#include "course/check.h"
#include "course/device.h"
#include "course/device_fill.cuh"
#include "course/device_random.h"

namespace {

constexpr int kBaselineThreads = 256;

__global__ void per_value_device_atomics(const unsigned* __restrict__ in, int n,
                                         unsigned* bins) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * kBaselineThreads;
  for (std::size_t at = static_cast<std::size_t>(blockIdx.x) * kBaselineThreads + threadIdx.x;
       at < static_cast<std::size_t>(n); at += step)
    atomicAdd(bins + scope_bin(in[at]), 1u);
}

struct OneBin {
  std::uint64_t seed;
  unsigned bin;
  __device__ unsigned operator()(std::size_t i) const {
    return (course::hashed_uint(i, seed) & ~static_cast<unsigned>(kScopeBins - 1)) | bin;
  }
};

}  // namespace

void course_histogram_device_scope(const unsigned* in, int n, unsigned* bins,
                                   cudaStream_t stream) {
  if (n <= 0) return;
  // A few resident blocks per SM, looping over the input: the atomics, not the grid, set the
  // pace.
  const int wanted = (n + kBaselineThreads - 1) / kBaselineThreads;
  const int blocks = wanted < course::sm_count() * 8 ? wanted : course::sm_count() * 8;
  per_value_device_atomics<<<blocks, kBaselineThreads, 0, stream>>>(in, n, bins);
  CUDA_CHECK_LAUNCH();
}

void fill_one_bin(unsigned* data, int n, unsigned bin, std::uint64_t seed, cudaStream_t stream) {
  course::fill_by_index(data, static_cast<std::size_t>(n), stream, OneBin{seed, bin});
}
