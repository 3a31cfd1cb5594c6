#include "course/device_random.h"

#include <algorithm>
#include <thread>
#include <vector>

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

long long hashed_int_sum(std::size_t n, std::uint64_t seed) {
  const unsigned workers = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::vector<long long> partial(workers, 0);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&partial, n, seed, w, workers] {
      long long sum = 0;
      for (std::size_t i = w * n / workers; i < (w + 1) * n / workers; ++i)
        sum += hashed_int(i, seed);
      partial[w] = sum;
    });
  }
  for (std::thread& thread : threads) thread.join();
  long long sum = 0;
  for (const long long p : partial) sum += p;
  return sum;
}

}  // namespace course
