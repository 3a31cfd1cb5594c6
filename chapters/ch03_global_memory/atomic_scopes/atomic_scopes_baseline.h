// Course-owned code the atomic_scopes benchmark measures against (not the student's API).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

// bins[scope_bin(in[i])] += 1 for every i, one relaxed device-scope atomicAdd per value (a
// REDG...GPU in SASS): every update is carried out in the L2, and updates of one bin queue
// there. Adds to bins like the student's launchers.
void course_histogram_device_scope(const unsigned* in, int n, unsigned* bins,
                                   cudaStream_t stream);

// data[i] = a value hashed from (seed, i) with its low eight bits replaced by `bin`: every value
// lands in one bin, the most contended input a histogram can get.
void fill_one_bin(unsigned* data, int n, unsigned bin, std::uint64_t seed, cudaStream_t stream);
