// Course-owned GPU code for transpose_global: the naive version the speedups are measured
// against.
#include <cstddef>

#include "course/check.h"
#include "transpose_global_baseline.h"

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
