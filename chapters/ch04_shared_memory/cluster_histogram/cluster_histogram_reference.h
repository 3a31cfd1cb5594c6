// The CPU reference of cluster_histogram, shared by its tests and benchmark (course code).
#pragma once

#include <vector>

// counts[b] = the number of values equal to b, for b in [0, num_bins); every value must lie in
// that range. Large inputs are counted on all cores, each range into counts of its own, then
// added: the sum is exact whatever the split.
std::vector<unsigned> reference_histogram(const std::vector<unsigned>& values, int num_bins);
