// Course-owned GPU code for transpose_global: the naive version the speedups are measured
// against. The kernel is in transpose_global_kernels.cu, compiled to PTX
// (transpose_global_kernels.h says why).
#include "course/check.h"
#include "transpose_global_baseline.h"
#include "transpose_global_kernels.h"

void transpose_naive_baseline(const float* in, float* out, int nx, int ny, cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
  transpose_naive_baseline_kernel<<<grid, block, 0, stream>>>(in, out, nx, ny);
  CUDA_CHECK_LAUNCH();
}
