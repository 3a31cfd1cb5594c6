// The flat two-pass reduction of chapter 02, launched from the host: the benchmark's baseline.
// Course code in its own translation unit, with its own names, so a submission can neither
// call it (the integrity stage rejects that) nor collide with it.
#include "recursive_reduce_baseline.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "course/check.h"

namespace cg = cooperative_groups;

namespace {

constexpr int kTileThreads = 256;
constexpr int kLoadsPerThread = 8;
constexpr std::size_t kTile = static_cast<std::size_t>(kTileThreads) * kLoadsPerThread;
constexpr int kFinishThreads = 1024;

// The warp's sum in every lane, by cooperative groups (chapter 02 wrote the shuffles by hand).
__device__ __forceinline__ long long course_warp_sum(long long value) {
  const auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  return cg::reduce(warp, value, cg::plus<long long>());
}

// The block's sum, valid in thread 0: shuffles within each warp, then warp 0 adds the warp sums.
template <int kThreads>
__device__ __forceinline__ long long course_block_sum(long long value) {
  __shared__ long long warp_sums[kThreads / 32];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  value = course_warp_sum(value);
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < kThreads / 32 ? warp_sums[lane] : 0;
    value = course_warp_sum(value);
  }
  return value;
}

// Pass 1: block b sums in[b * kTile, (b + 1) * kTile), clipped to n; all eight loads are issued
// before the first add, so they are in flight together.
__global__ void __launch_bounds__(kTileThreads)
    course_flat_tile_kernel(const int* __restrict__ in, std::size_t n,
                            long long* __restrict__ partials) {
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kTile + threadIdx.x;
  int loaded[kLoadsPerThread];
#pragma unroll
  for (int k = 0; k < kLoadsPerThread; ++k) {
    const std::size_t at = first + static_cast<std::size_t>(k) * kTileThreads;
    loaded[k] = at < n ? in[at] : 0;
  }
  long long own = 0;
#pragma unroll
  for (int k = 0; k < kLoadsPerThread; ++k) own += loaded[k];
  const long long sum = course_block_sum<kTileThreads>(own);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// Pass 2: one block strides over the partial sums and writes the total.
__global__ void __launch_bounds__(kFinishThreads)
    course_flat_finish_kernel(const long long* __restrict__ partials, std::size_t count,
                              long long* __restrict__ result) {
  long long own = 0;
  for (std::size_t i = threadIdx.x; i < count; i += kFinishThreads) own += partials[i];
  const long long sum = course_block_sum<kFinishThreads>(own);
  if (threadIdx.x == 0) *result = sum;
}

}  // namespace

void course_flat_reduce(const int* in, long long* partials, std::size_t n, long long* result,
                        cudaStream_t stream) {
  if (n == 0) {
    CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(long long), stream));
    return;
  }
  const std::size_t blocks = (n + kTile - 1) / kTile;
  course_flat_tile_kernel<<<static_cast<unsigned>(blocks), kTileThreads, 0, stream>>>(in, n,
                                                                                       partials);
  CUDA_CHECK_LAUNCH();
  course_flat_finish_kernel<<<1, kFinishThreads, 0, stream>>>(partials, blocks, result);
  CUDA_CHECK_LAUNCH();
}
