// Course-owned code the smem_reduction benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

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

// A full-range 32-bit value per index (splitmix64 finaliser): sums of many need 64 bits.
__host__ __device__ inline int smem_reduction_hashed_int(std::uint64_t i, std::uint32_t seed) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<int>(static_cast<std::uint32_t>(x >> 32));
}

// data[i] = smem_reduction_hashed_int(i, seed) for i in [0, n), generated on the device.
void smem_reduction_fill_hashed(int* data, std::size_t n, std::uint32_t seed,
                                cudaStream_t stream);
