#include "cuda_graphs_baseline.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"
#include "cuda_graphs.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;

__global__ void plain_step_kernel(float* __restrict__ data, std::size_t n, int step) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = step_update(data[i], step);
}

}  // namespace

void step_chain_plain_launches(float* data, std::size_t n, int steps, cudaStream_t stream) {
  if (n == 0) return;
  const int blocks = static_cast<int>(std::min<std::size_t>(
      (n + kThreads - 1) / kThreads, static_cast<std::size_t>(course::sm_count()) * kBlocksPerSm));
  for (int step = 0; step < steps; ++step) {
    plain_step_kernel<<<blocks, kThreads, 0, stream>>>(data, n, step);
    CUDA_CHECK_LAUNCH();
  }
}
