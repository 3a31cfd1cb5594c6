#include "stream_ordered_allocation_baseline.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"
#include "stream_ordered_allocation.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;

__global__ void course_mix_kernel(const std::uint32_t* __restrict__ in,
                                  std::uint32_t* __restrict__ scratch, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    scratch[i] = chunk_mix(in[i]);
}

__global__ void course_pair_kernel(const std::uint32_t* __restrict__ scratch,
                                   std::uint32_t* __restrict__ out, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    out[i] = chunk_pair(scratch[i], scratch[count - 1 - i]);
}

}  // namespace

void stream_ordered_allocation_malloc_per_chunk(const std::uint32_t* in, std::uint32_t* out,
                                                const std::size_t* offsets, int chunks,
                                                cudaStream_t stream) {
  const std::size_t most_blocks = static_cast<std::size_t>(course::sm_count()) * kBlocksPerSm;
  for (int c = 0; c < chunks; ++c) {
    const std::size_t first = offsets[c];
    const std::size_t count = offsets[c + 1] - first;
    if (count == 0) continue;
    const int blocks = static_cast<int>(std::min((count + kThreads - 1) / kThreads, most_blocks));
    std::uint32_t* scratch = nullptr;
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&scratch), count * sizeof(std::uint32_t)));
    course_mix_kernel<<<blocks, kThreads, 0, stream>>>(in + first, scratch, count);
    CUDA_CHECK_LAUNCH();
    course_pair_kernel<<<blocks, kThreads, 0, stream>>>(scratch, out + first, count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaFree(scratch));
  }
}
