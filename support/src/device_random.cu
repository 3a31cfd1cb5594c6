#include "course/device_random.h"

#include "course/check.h"
#include "course/device.h"

namespace course {

namespace {

template <class T, class Value>
__global__ void fill_kernel(T* __restrict__ data, std::size_t n, Value value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = value(i);
}

template <class T, class Value>
void launch_fill(T* data, std::size_t n, cudaStream_t stream, Value value) {
  if (n == 0) return;
  // Grid-stride: enough blocks to fill every SM, whatever n is.
  fill_kernel<<<sm_count() * 8, 256, 0, stream>>>(data, n, value);
  CUDA_CHECK_LAUNCH();
}

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
  launch_fill(data, n, stream, HashedInt{seed});
}

void fill_hashed(unsigned* data, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  launch_fill(data, n, stream, HashedUint{seed});
}

void fill_hashed(float* data, std::size_t n, std::uint64_t seed, cudaStream_t stream, float lo,
                 float hi) {
  launch_fill(data, n, stream, HashedFloat{seed, lo, hi});
}

}  // namespace course
