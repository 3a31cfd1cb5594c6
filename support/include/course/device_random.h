// Seeded inputs generated on the device, for benchmarks whose inputs are too big to draw on the
// host and upload. Element i depends only on (seed, i), and the same hash is callable on the
// host, so a CPU reference can recompute any element without downloading the input.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace course {

// splitmix64 of (seed, index): a well-mixed 64-bit value per element.
__host__ __device__ inline std::uint64_t hash_index(std::uint64_t index, std::uint64_t seed) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Full 32-bit range: sums of many of them need 64-bit accumulators.
__host__ __device__ inline int hashed_int(std::uint64_t index, std::uint64_t seed) {
  return static_cast<int>(static_cast<std::uint32_t>(hash_index(index, seed) >> 32));
}

__host__ __device__ inline unsigned hashed_uint(std::uint64_t index, std::uint64_t seed) {
  return static_cast<unsigned>(hash_index(index, seed) >> 32);
}

// 24 random bits spread over [lo, hi). For the default [-1, 1) every value is an exactly
// representable float, so sums of a few of them are exact and comparisons can be tight.
__host__ __device__ inline float hashed_float(std::uint64_t index, std::uint64_t seed,
                                              float lo = -1.0f, float hi = 1.0f) {
  const float unit = static_cast<float>(hash_index(index, seed) >> 40) * (1.0f / 16777216.0f);
  // In double the product of two floats is exact, so a compiler that fuses the multiply and
  // the add (nvcc does by default) gives the same bits as one that does not: host and device
  // agree for any range, not only for ranges where the float product happens to be exact.
  return static_cast<float>(static_cast<double>(lo) +
                            static_cast<double>(hi - lo) * static_cast<double>(unit));
}

// data[i] = hashed_*(i, seed) for i in [0, n), enqueued on `stream`; n = 0 does nothing.
void fill_hashed(int* data, std::size_t n, std::uint64_t seed, cudaStream_t stream);
void fill_hashed(unsigned* data, std::size_t n, std::uint64_t seed, cudaStream_t stream);
void fill_hashed(float* data, std::size_t n, std::uint64_t seed, cudaStream_t stream,
                 float lo = -1.0f, float hi = 1.0f);

// hashed_int(0, seed) + ... + hashed_int(n - 1, seed) on the host, the host's cores sharing
// the indices: a reduction benchmark's expected sum without downloading its input.
long long hashed_int_sum(std::size_t n, std::uint64_t seed);

}  // namespace course
