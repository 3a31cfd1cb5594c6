#include "course/check.h"
#include "occupancy.h"

namespace {

__global__ void light_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * 3.0f;
}

// 48 independent accumulators, each updated in a fully unrolled loop, keep many values live at
// once: the compiler needs far more registers than light_kernel.
__global__ void register_heavy_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc[48];
  const float v = x[i];
#pragma unroll
  for (int k = 0; k < 48; ++k) acc[k] = v * (k + 1);
#pragma unroll
  for (int round = 0; round < 8; ++round) {
#pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = acc[k] * acc[(k + 7) % 48] + acc[(k + 13) % 48];
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < 48; ++k) sum += acc[k];
  y[i] = sum;
}

constexpr int kSharedFloats = 36 * 1024 / sizeof(float);

__global__ void shared_heavy_kernel(const float* x, float* y, int n) {
  __shared__ float staging[kSharedFloats];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = threadIdx.x; k < kSharedFloats; k += blockDim.x) staging[k] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (i < n) y[i] = staging[(threadIdx.x * 7) % kSharedFloats];
}

__global__ void streaming_scale_kernel_impl(const float* __restrict__ x, float* __restrict__ y,
                                            int n) {
  const int stride = gridDim.x * blockDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = 2.0f * x[i] + 1.0f;
}

}  // namespace

const void* occupancy_kernel(OccupancyKernel which) {
  switch (which) {
    case OccupancyKernel::kLight: return reinterpret_cast<const void*>(&light_kernel);
    case OccupancyKernel::kRegisterHeavy:
      return reinterpret_cast<const void*>(&register_heavy_kernel);
    case OccupancyKernel::kSharedHeavy: return reinterpret_cast<const void*>(&shared_heavy_kernel);
  }
  return nullptr;
}

const void* streaming_scale_kernel() {
  return reinterpret_cast<const void*>(&streaming_scale_kernel_impl);
}

void streaming_scale(LaunchConfig config, const float* x, float* y, int n, cudaStream_t stream) {
  streaming_scale_kernel_impl<<<config.grid, config.block, 0, stream>>>(x, y, n);
  CUDA_CHECK_LAUNCH();
}
