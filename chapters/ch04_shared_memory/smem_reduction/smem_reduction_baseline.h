// Course-owned code the smem_reduction benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// The chapter-02 style reduction without shared memory: each block of 512 threads adds pairs
// of its 1024 inputs into its slice of `scratch` (global memory), then halves that slice in
// place, one __syncthreads() per step, and adds the slice's first element to *out.
// scratch holds smem_reduction_global_scratch_size(n) long longs.
std::size_t smem_reduction_global_scratch_size(int n);
void smem_reduction_global_inplace(const int* in, int n, long long* scratch, long long* out,
                                   cudaStream_t stream);

// CUB's DeviceReduce::Sum of n ints into one long long, for context.
std::size_t smem_reduction_cub_temp_bytes(int n);
void smem_reduction_cub(const int* in, int n, long long* out, void* temp, std::size_t temp_bytes,
                        cudaStream_t stream);
