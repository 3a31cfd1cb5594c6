// Exercise ch04 / histogram: counts per bin with privatised shared-memory atomics.
//
// Frozen API: the tests and the benchmark call exactly this.
//   in        device pointer to n values, every one in [0, num_bins) (the value is its bin);
//             never written.
//   n         0 <= n < 2^32 (every count fits an unsigned int).
//   bins      device pointer to num_bins unsigned ints; on return bins[b] is the number of
//             values equal to b. Its contents on entry are garbage: every bin must be written,
//             including bins that stay 0 and every bin when n = 0.
//   num_bins  1 <= num_bins <= 1 << 20. Up to a few thousand bins a block's private copy fits
//             easily in shared memory; larger counts must still work (opt in to more dynamic
//             shared memory, or fall back to global atomics).
//   stream    all work goes on this stream; the function returns without waiting.
// Nothing outside bins[0, num_bins) may be written.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

constexpr int kHistogramMaxBins = 1 << 20;

void histogram(const unsigned* in, std::size_t n, unsigned* bins, int num_bins,
               cudaStream_t stream);
