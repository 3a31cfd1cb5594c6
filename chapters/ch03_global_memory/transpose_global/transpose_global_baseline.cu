// Course-owned GPU code for transpose_global: the naive version the speedups are measured
// against, and a device-side input generator.
#include <cstddef>

#include "course/check.h"
#include "transpose_global.h"

__global__ void transpose_naive_baseline_kernel(const float* __restrict__ in,
                                                float* __restrict__ out, int nx, int ny) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < nx && y < ny)
    out[static_cast<std::size_t>(x) * ny + y] = in[static_cast<std::size_t>(y) * nx + x];
}

void transpose_naive_baseline(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
  transpose_naive_baseline_kernel<<<grid, block, 0, stream>>>(in, out, nx, ny);
  CUDA_CHECK_LAUNCH();
}

__global__ void fill_hash_kernel(float* data, std::size_t n, unsigned long long seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    unsigned long long h = seed ^ i;  // splitmix64 finaliser
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    data[i] = static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
}

void fill_hash(float* data, std::size_t n, unsigned long long seed, cudaStream_t stream) {
  if (n == 0) return;
  fill_hash_kernel<<<4096, 256, 0, stream>>>(data, n, seed);
  CUDA_CHECK_LAUNCH();
}
