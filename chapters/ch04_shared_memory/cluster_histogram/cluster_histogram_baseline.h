// Course-owned code the cluster_histogram benchmark compares against (not student code): the way
// to count a table too large for one block without a cluster, and the benchmark's input.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// One global atomicAdd per value, straight into bins: what a table too large for one block's
// shared memory falls back to without clusters. Every update goes to the L2, and updates of the
// same bin queue there.
void histogram_global_atomics(const unsigned* in, std::size_t n, unsigned* bins, int num_bins,
                              cudaStream_t stream);

// data[i] in [0, num_bins), hashed from (seed, i). Uniform: every bin equally likely. Skewed:
// nine values in ten are hot_bin, the rest uniform.
void histogram_fill(unsigned* data, std::size_t n, int num_bins, bool skewed, unsigned hot_bin,
                    std::uint64_t seed, cudaStream_t stream);
