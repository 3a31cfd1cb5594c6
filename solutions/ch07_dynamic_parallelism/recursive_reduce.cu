#include "recursive_reduce.h"

#include <cstddef>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "course/check.h"

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kLoadsPerThread = 8;
// Values one block sums: a level of c values has ceil(c / kTile) blocks.
constexpr std::size_t kTile = static_cast<std::size_t>(kThreads) * kLoadsPerThread;

// Given: the sum of a warp's 32 values, in every lane. Chapter 02 wrote these shuffles by hand;
// cooperative groups' reduce does the same exchange for us.
__device__ __forceinline__ long long warp_sum(long long value) {
  const auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  return cg::reduce(warp, value, cg::plus<long long>());
}

// Given (chapter 02): block b's sum of values[b * kTile, (b + 1) * kTile), clipped to count,
// valid in thread 0. Every thread of the block must call it (it has a barrier). The eight
// loads are issued before the first add, so they are in flight together.
template <class Value>
__device__ long long tile_sum(const Value* __restrict__ values, std::size_t count) {
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kTile + threadIdx.x;
  Value loaded[kLoadsPerThread];
#pragma unroll
  for (int k = 0; k < kLoadsPerThread; ++k) {
    const std::size_t at = first + static_cast<std::size_t>(k) * kThreads;
    loaded[k] = at < count ? values[at] : Value{0};
  }
  long long own = 0;
#pragma unroll
  for (int k = 0; k < kLoadsPerThread; ++k) own += loaded[k];

  __shared__ long long warp_sums[kThreads / 32];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  own = warp_sum(own);
  if (lane == 0) warp_sums[warp] = own;
  __syncthreads();
  if (warp == 0) own = warp_sum(lane < kThreads / 32 ? warp_sums[lane] : 0);
  return own;
}

__global__ void reduce_partials_kernel(const long long* __restrict__ sums, std::size_t count,
                                       long long* __restrict__ partials,
                                       long long* __restrict__ result);

// What every level does with its blocks' sums (block_total is valid in thread 0): a level of
// one block writes *result; otherwise block b writes partials[b], and one thread launches the
// next level, which sums partials[0, gridDim.x) into partials + gridDim.x onwards.
__device__ void finish_level(long long block_total, long long* partials, long long* result) {
  // @begin-solution: Only thread 0 holds block_total. With gridDim.x == 1 it is the total:
  // @hint: write *result. Otherwise write partials[blockIdx.x], and let ONE thread of the grid
  // @hint: (thread 0 of block 0) launch reduce_partials_kernel over the gridDim.x partials,
  // @hint: with ceil(gridDim.x / kTile) blocks of kThreads threads, its own partials right
  // @hint: after this level's (partials + gridDim.x), into the stream cudaStreamTailLaunch:
  // @hint: a tail launch starts only once every block of this grid has finished, so the next
  // @hint: level never reads a partial sum before it is written (cudaStreamFireAndForget, or
  // @hint: the default stream, may start it at once: a race). Check cudaGetLastError() right
  // @hint: after the launch: a failed device launch is reported nowhere else.
  if (threadIdx.x != 0) return;
  if (gridDim.x == 1) {
    *result = block_total;
    return;
  }
  partials[blockIdx.x] = block_total;
  if (blockIdx.x == 0) {
    const std::size_t count = gridDim.x;
    const auto blocks = static_cast<unsigned>((count + kTile - 1) / kTile);
    reduce_partials_kernel<<<blocks, kThreads, 0, cudaStreamTailLaunch>>>(
        partials, count, partials + count, result);
    // A failed launch would leave *result unwritten without an error anywhere: trapping
    // turns it into a launch failure the host sees when it synchronises.
    if (cudaGetLastError() != cudaSuccess) __trap();
  }
  // @skeleton: (void)block_total; (void)partials; (void)result;
  // @end-solution
}

// Level 0: the ints, summed a tile per block.
__global__ void __launch_bounds__(kThreads)
    reduce_input_kernel(const int* __restrict__ in, std::size_t n, long long* __restrict__ partials,
                        long long* __restrict__ result) {
  finish_level(tile_sum(in, n), partials, result);
}

// Levels 1 and later: the previous level's partial sums, the same way.
__global__ void __launch_bounds__(kThreads)
    reduce_partials_kernel(const long long* __restrict__ sums, std::size_t count,
                           long long* __restrict__ partials, long long* __restrict__ result) {
  finish_level(tile_sum(sums, count), partials, result);
}

void recursive_reduce(const int* in, long long* scratch, std::size_t n, long long* result,
                      cudaStream_t stream) {
  // @begin-solution: n = 0: write 0 to *result on the stream (cudaMemsetAsync) and return.
  // @hint: Otherwise launch level 0 only, reduce_input_kernel with ceil(n / kTile) blocks of
  // @hint: kThreads threads on `stream`, its partial sums at the start of scratch; the levels
  // @hint: after it launch themselves (finish_level). Never synchronise here.
  if (n == 0) {
    CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(long long), stream));
    return;
  }
  const auto blocks = static_cast<unsigned>((n + kTile - 1) / kTile);
  reduce_input_kernel<<<blocks, kThreads, 0, stream>>>(in, n, scratch, result);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)scratch; (void)n; (void)result; (void)stream;
  // @end-solution
}
