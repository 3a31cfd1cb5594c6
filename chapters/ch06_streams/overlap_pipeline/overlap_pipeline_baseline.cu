#include "overlap_pipeline_baseline.h"

#include <algorithm>
#include <cstddef>

#include "course/buffers.h"
#include "course/check.h"
#include "course/device.h"
#include "overlap_pipeline.h"

namespace {

constexpr int kThreads = 256;
// 2048 threads per SM: enough warps to hide the latency of each step's dependent FMA.
constexpr int kBlocksPerSm = 8;

__global__ void course_pipeline_kernel(const float* __restrict__ in, float* __restrict__ out,
                                       std::size_t count, int iterations) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    out[i] = pipeline_transform(in[i], iterations);
}

void launch_transform(const float* in, float* out, std::size_t count, int iterations,
                      cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t needed = (count + kThreads - 1) / kThreads;
  const std::size_t most = static_cast<std::size_t>(course::sm_count()) * kBlocksPerSm;
  const int blocks = static_cast<int>(std::min(needed, most));
  course_pipeline_kernel<<<blocks, kThreads, 0, stream>>>(in, out, count, iterations);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void overlap_pipeline_course_transform(const float* dev_in, float* dev_out, std::size_t n,
                                       int iterations, cudaStream_t stream) {
  launch_transform(dev_in, dev_out, n, iterations, stream);
}

void overlap_pipeline_sequential(const float* host_in, float* host_out, float* dev_in,
                                 float* dev_out, std::size_t n, int iterations,
                                 cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t bytes = n * sizeof(float);
  CUDA_CHECK(cudaMemcpyAsync(dev_in, host_in, bytes, cudaMemcpyHostToDevice, stream));
  launch_transform(dev_in, dev_out, n, iterations, stream);
  CUDA_CHECK(cudaMemcpyAsync(host_out, dev_out, bytes, cudaMemcpyDeviceToHost, stream));
}
