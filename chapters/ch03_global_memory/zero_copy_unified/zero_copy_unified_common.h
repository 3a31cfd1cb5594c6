// Course helpers shared by the tests and the benchmark of zero_copy_unified.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

// The reference, with the multiply and add rounded separately the way the test expects a
// kernel to compute them (nvcc would fuse them; the tolerance allows either).
std::vector<float> saxpy_reference(const float* in, std::size_t n, float factor, float offset);

// Moves a managed range back to host memory, stream-ordered (CUDA 13 signature), so that the
// next kernel has to fetch it again.
void prefetch_to_host(const void* pointer, std::size_t bytes, cudaStream_t stream);
