#include "course/device_random.h"

#include "course/device_fill.cuh"

namespace course {

namespace {

struct HashedInt {
  std::uint64_t seed;
  __device__ int operator()(std::size_t i) const { return hashed_int(i, seed); }
};
struct HashedUint {
  std::uint64_t seed;
  __device__ unsigned operator()(std::size_t i) const { return hashed_uint(i, seed); }
};
struct HashedFloat {
  std::uint64_t seed;
  float lo, hi;
  __device__ float operator()(std::size_t i) const { return hashed_float(i, seed, lo, hi); }
};

}  // namespace

void fill_hashed(int* data, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_by_index(data, n, stream, HashedInt{seed});
}

void fill_hashed(unsigned* data, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  fill_by_index(data, n, stream, HashedUint{seed});
}

void fill_hashed(float* data, std::size_t n, std::uint64_t seed, cudaStream_t stream, float lo,
                 float hi) {
  fill_by_index(data, n, stream, HashedFloat{seed, lo, hi});
}

}  // namespace course
