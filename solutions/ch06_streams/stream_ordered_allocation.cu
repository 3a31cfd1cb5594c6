#include "stream_ordered_allocation.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "course/check.h"
#include "course/device.h"

constexpr int kThreads = 256;

// Given: this exercise is about where each chunk's scratch comes from, not about the kernels.
__global__ void __launch_bounds__(kThreads)
    mix_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ scratch,
               std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    scratch[i] = chunk_mix(in[i]);
}

__global__ void __launch_bounds__(kThreads)
    pair_kernel(const std::uint32_t* __restrict__ scratch, std::uint32_t* __restrict__ out,
                std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    out[i] = chunk_pair(scratch[i], scratch[count - 1 - i]);
}

cudaMemPool_t open_scratch_pool() {
  // @begin-solution: Make a pool of your own: a cudaMemPoolProps zero-initialised, with
  // @hint: allocType = cudaMemAllocationTypePinned and location = {cudaMemLocationTypeDevice,
  // @hint: the current device (cudaGetDevice)}, then cudaMemPoolCreate. (Or take the device's
  // @hint: current pool with cudaDeviceGetMemPool.) Then raise its release threshold with
  // @hint: cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &value), value a
  // @hint: std::uint64_t of at least kScratchPoolKeeps (UINT64_MAX keeps everything).
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  // Memory the pool holds stays reserved when the host synchronises, so the next call's
  // allocations are served without asking the driver to map memory again.
  std::uint64_t keep = UINT64_MAX;
  CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  return pool;
  // @skeleton: return nullptr;
  // @end-solution
}

void close_scratch_pool(cudaMemPool_t pool) {
  // @begin-solution: Give the memory back: cudaMemPoolDestroy for a pool of your own (nothing
  // @hint: for nullptr). The device's own pool cannot be destroyed: set its threshold back to
  // @hint: 0 and cudaMemPoolTrimTo(pool, 0) instead.
  if (pool != nullptr) CUDA_CHECK(cudaMemPoolDestroy(pool));
  // @skeleton: (void)pool;
  // @end-solution
}

void process_chunks(const std::uint32_t* in, std::uint32_t* out, const std::size_t* offsets,
                    int chunks, cudaMemPool_t pool, cudaStream_t stream) {
  // @begin-solution: For each chunk c with count = offsets[c + 1] - offsets[c] > 0, on
  // @hint: `stream`: cudaMallocFromPoolAsync(&scratch, count * sizeof(std::uint32_t), pool,
  // @hint: stream), then mix_kernel(in + first, scratch, count) and pair_kernel(scratch,
  // @hint: out + first, count) (kThreads threads, enough blocks for count but at most
  // @hint: course::sm_count() * 8), then cudaFreeAsync(scratch, stream). Stream order makes
  // @hint: the scratch valid for the two kernels and reusable by the next chunk's allocation;
  // @hint: nothing here waits. Check each launch with CUDA_CHECK(cudaGetLastError()): the
  // @hint: tests record this call into a graph, and CUDA_CHECK_LAUNCH() may synchronise.
  const std::size_t most_blocks = static_cast<std::size_t>(course::sm_count()) * 8;
  for (int c = 0; c < chunks; ++c) {
    const std::size_t first = offsets[c];
    const std::size_t count = offsets[c + 1] - first;
    if (count == 0) continue;
    const int blocks = static_cast<int>(std::min((count + kThreads - 1) / kThreads, most_blocks));
    std::uint32_t* scratch = nullptr;
    CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&scratch),
                                       count * sizeof(std::uint32_t), pool, stream));
    mix_kernel<<<blocks, kThreads, 0, stream>>>(in + first, scratch, count);
    CUDA_CHECK(cudaGetLastError());
    pair_kernel<<<blocks, kThreads, 0, stream>>>(scratch, out + first, count);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaFreeAsync(scratch, stream));
  }
  // @skeleton: (void)in; (void)out; (void)offsets; (void)chunks; (void)pool; (void)stream;
  // @end-solution
}
