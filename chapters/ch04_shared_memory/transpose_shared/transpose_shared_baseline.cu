#include "transpose_shared_baseline.h"

#include "course/check.h"

namespace {

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

__global__ void copy_same_shape_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       int rows, int cols) {
  const int c = blockIdx.x * kTile + threadIdx.x;
  const int r0 = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kBlockRows) {
    const int r = r0 + j;
    if (r < rows && c < cols) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      out[i] = in[i];
    }
  }
}

__global__ void naive_kernel(const float* __restrict__ in, float* __restrict__ out, int rows,
                             int cols) {
  const int c = blockIdx.x * kTile + threadIdx.x;
  const int r0 = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kBlockRows) {
    const int r = r0 + j;
    if (r < rows && c < cols)
      out[static_cast<std::size_t>(c) * rows + r] = in[static_cast<std::size_t>(r) * cols + c];
  }
}

__global__ void fill_hash_kernel(float* data, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    // splitmix64 of (seed, index): cheap, well mixed, reproducible.
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    data[i] = static_cast<float>(static_cast<std::uint32_t>(z >> 40)) * (2.0f / 16777216.0f) - 1.0f;
  }
}

dim3 tile_grid(int rows, int cols) {
  return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile);
}

}  // namespace

void transpose_shared_copy_same_shape(const float* in, float* out, int rows, int cols,
                                      cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  copy_same_shape_kernel<<<tile_grid(rows, cols), dim3(kTile, kBlockRows), 0, stream>>>(
      in, out, rows, cols);
  CUDA_CHECK_LAUNCH();
}

void transpose_shared_naive(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  naive_kernel<<<tile_grid(rows, cols), dim3(kTile, kBlockRows), 0, stream>>>(in, out, rows,
                                                                              cols);
  CUDA_CHECK_LAUNCH();
}

void transpose_shared_fill_hash(float* data, std::size_t n, std::uint64_t seed,
                                cudaStream_t stream) {
  if (n == 0) return;
  fill_hash_kernel<<<1024, 256, 0, stream>>>(data, n, seed);
  CUDA_CHECK_LAUNCH();
}
