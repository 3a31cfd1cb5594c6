// Kernels the support library's GPU tests launch (compiled by nvcc; the tests are host C++).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace course_test {

// data[i] = value for i in [first, last): a kernel that writes exactly that range, which may
// start before 0 or end past the caller's count to play a kernel with an off-by-one.
void write_range(float* data, std::ptrdiff_t first, std::ptrdiff_t last, float value,
                 cudaStream_t stream);

// *out = the sum of in[0, n), by one block: a small output computed from a large input, the
// shape of work whose result a launcher could cache.
void sum_ints(const int* in, int n, long long* out, cudaStream_t stream);

// One thread that spins for `cycles` clock cycles: work left running on a stream.
void spin(long long cycles, cudaStream_t stream);

}  // namespace course_test
