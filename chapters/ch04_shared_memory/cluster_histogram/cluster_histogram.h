// Exercise ch04 / cluster_histogram: a histogram whose table is split over the blocks of a
// thread-block cluster, each block counting its slice in shared memory and the others adding to
// it through distributed shared memory (compute capability 9.0).
//
// Frozen API: the tests and the benchmark call exactly this.
//   in        device pointer to n values, every one in [0, num_bins) (the value is its bin);
//             never written.
//   n         0 <= n < 2^32 (every count fits an unsigned int).
//   bins      device pointer to num_bins unsigned ints; on return bins[b] is the number of
//             values equal to b. Its contents on entry are garbage: every bin must be written,
//             including bins that stay 0 and every bin when n = 0.
//   num_bins  1 <= num_bins <= kClusterHistogramMaxBins. The largest tables (256 KiB of counts)
//             do not fit one block's shared memory (227 KiB at most on compute capability 9.0):
//             a cluster of blocks holds them, each block one slice.
//   stream    all work goes on this stream; the function returns without waiting.
// Nothing outside bins[0, num_bins) may be written. The device has compute capability 9.0 or
// later (the grader skips the exercise elsewhere).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

constexpr int kClusterHistogramMaxBins = 1 << 16;

void cluster_histogram(const unsigned* in, std::size_t n, unsigned* bins, int num_bins,
                       cudaStream_t stream);
