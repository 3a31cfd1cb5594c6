#include "course/device_random.h"

#include <vector>

#include "course/device_fill.cuh"
#include "course/parallel.h"

namespace course {

namespace {

constexpr std::size_t kSummedPerThread = 1 << 20;

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

long long hashed_int_sum(std::size_t n, std::uint64_t seed) {
  std::vector<long long> partial(chunk_count(n, kSummedPerThread), 0);
  parallel_chunks(n, kSummedPerThread, [&](std::size_t chunk, std::size_t begin,
                                           std::size_t end) {
    long long sum = 0;
    for (std::size_t i = begin; i < end; ++i) sum += hashed_int(i, seed);
    partial[chunk] = sum;
  });
  long long sum = 0;
  for (const long long p : partial) sum += p;
  return sum;
}

}  // namespace course
