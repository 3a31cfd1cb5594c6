#include "matrix_sum_2d_baseline.h"

#include "course/check.h"

namespace {

__global__ void sum_one_per_thread(const float* __restrict__ a, const float* __restrict__ b,
                                   float* __restrict__ c, int nx, int ny) {
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = blockIdx.y * blockDim.y + threadIdx.y;
  if (ix < nx && iy < ny) {
    const std::size_t i = static_cast<std::size_t>(iy) * nx + ix;
    c[i] = a[i] + b[i];
  }
}

__global__ void fill_kernel(float* data, std::size_t n, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    // 24 random bits scaled into [-1, 1): exactly representable floats.
    data[i] = static_cast<float>(static_cast<int>(x >> 40) - (1 << 23)) * (1.0f / (1 << 23));
  }
}

}  // namespace

void matrix_sum_2d_with_block(const float* a, const float* b, float* c, int nx, int ny,
                              dim3 block, cudaStream_t stream) {
  if (nx <= 0 || ny <= 0) return;
  const dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
  sum_one_per_thread<<<grid, block, 0, stream>>>(a, b, c, nx, ny);
  CUDA_CHECK_LAUNCH();
}

void fill_hashed_floats(float* data, std::size_t n, std::uint32_t seed, cudaStream_t stream) {
  if (n == 0) return;
  fill_kernel<<<1024, 256, 0, stream>>>(data, n, seed);
  CUDA_CHECK_LAUNCH();
}
