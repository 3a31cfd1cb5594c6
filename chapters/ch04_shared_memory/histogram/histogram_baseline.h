// Course-owned code the histogram benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// One global atomicAdd per value: every update goes to the L2, and updates of the same bin
// queue there.
void histogram_global_atomics(const unsigned* in, std::size_t n, unsigned* bins, int num_bins,
                              cudaStream_t stream);

// CUB's DeviceHistogram::HistogramEven with num_bins unit-wide bins over [0, num_bins).
std::size_t histogram_cub_temp_bytes(std::size_t n, int num_bins);
void histogram_cub(const unsigned* in, std::size_t n, unsigned* bins, int num_bins, void* temp,
                   std::size_t temp_bytes, cudaStream_t stream);

// data[i] in [0, num_bins), hashed from (seed, i). Uniform: every bin equally likely. Skewed:
// nine values in ten are hot_bin, the rest uniform.
void histogram_fill(unsigned* data, std::size_t n, int num_bins, bool skewed, unsigned hot_bin,
                    std::uint64_t seed, cudaStream_t stream);
