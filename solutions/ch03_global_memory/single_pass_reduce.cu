#include "single_pass_reduce.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"

constexpr int kThreads = 256;

// The sum of the block's values, in thread 0. Uses shared memory: two calls in one kernel need
// a __syncthreads() between them, so that the second call's writes wait for the first's reads.
__device__ __forceinline__ long long block_sum(long long value) {
  // @begin-solution: Sum each warp with __shfl_xor_sync (offsets 16, 8, 4, 2, 1), let lane 0 of
  // @hint: each warp write its sum to a __shared__ array of kThreads / 32 values,
  // @hint: __syncthreads(), then let warp 0 add those values the same way.
  constexpr unsigned kWarps = kThreads / 32;
  __shared__ long long warp_sums[kWarps];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  for (unsigned mask = 16; mask > 0; mask >>= 1)
    value += __shfl_xor_sync(0xffffffffu, value, mask);
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  value = 0;
  if (warp == 0) {
    if (lane < kWarps) value = warp_sums[lane];
    for (unsigned mask = 16; mask > 0; mask >>= 1)
      value += __shfl_xor_sync(0xffffffffu, value, mask);
  }
  return value;
  // @skeleton: return value;
  // @end-solution
}

// Every block sums its grid-stride share of in[] and leaves it in partial[blockIdx.x]; the
// block that finishes last adds the partials into *out and resets *counter to 0.
__global__ void __launch_bounds__(kThreads)
    single_pass_kernel(const int* __restrict__ in, int n, long long* partial,
                       unsigned int* counter, long long* out) {
  // @begin-solution: 1. Grid-stride sum of in[] into a long long, then block_sum.
  // @hint: 2. Thread 0: store the block's sum in partial[blockIdx.x], __threadfence() (so the
  // @hint: partial is visible to the whole GPU before the ticket is), ticket =
  // @hint: atomicAdd(counter, 1u); the block with ticket gridDim.x - 1 is the last one (tell
  // @hint: the other threads through a __shared__ flag and __syncthreads(); the last block's
  // @hint: thread 0 fences again after the atomic, before its threads read the partials).
  // @hint: 3. The last block: sum partial[0 .. gridDim.x), block_sum, and thread 0 writes *out
  // @hint: and sets *counter = 0, so the next call starts from zero without a memset.
  const std::size_t count = static_cast<std::size_t>(n);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  long long sum = 0;
  // Four independent loads per iteration keep more bytes in flight per thread.
  for (; i + 3 * stride < count; i += 4 * stride)
    sum += static_cast<long long>(in[i]) + in[i + stride] + in[i + 2 * stride] + in[i + 3 * stride];
  for (; i < count; i += stride) sum += in[i];
  sum = block_sum(sum);

  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = sum;
    // Release: without it the ticket may reach the GPU before the partial does, and the last
    // block would add a stale value.
    __threadfence();
    const unsigned int ticket = atomicAdd(counter, 1u);
    is_last = ticket == gridDim.x - 1;
    // Acquire: the partials read below are ordered after every other block's ticket.
    if (is_last) __threadfence();
  }
  __syncthreads();  // also separates the two uses of block_sum's shared memory
  if (!is_last) return;

  long long total = 0;
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += kThreads) total += partial[b];
  total = block_sum(total);
  if (threadIdx.x == 0) {
    *out = total;
    // Every block of this launch has drawn its ticket: nobody else touches the counter now.
    *counter = 0;
  }
  // @skeleton: (void)in; (void)n; (void)partial; (void)counter; (void)out;
  // @end-solution
}

void single_pass_reduce(const int* in, int n, void* scratch, long long* out,
                        cudaStream_t stream) {
  // @begin-solution: Launch single_pass_kernel once on `stream` with kThreads threads and enough
  // @hint: blocks to fill the GPU once (occupancy API x course::sm_count()), fewer when n is
  // @hint: small, at least 1 (n = 0 too: the last block writes the 0) and at most
  // @hint: kSinglePassMaxBlocks; pass single_pass_partials(scratch) and
  // @hint: single_pass_counter(scratch). No memset: the kernel resets the counter itself.
  static const int blocks_per_sm = [] {
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, single_pass_kernel,
                                                             kThreads, 0));
    return blocks;
  }();
  const std::size_t wanted = (static_cast<std::size_t>(n) + kThreads - 1) / kThreads;
  const std::size_t resident = static_cast<std::size_t>(blocks_per_sm) * course::sm_count();
  const auto blocks = static_cast<int>(std::clamp<std::size_t>(
      std::min(wanted, resident), 1, static_cast<std::size_t>(kSinglePassMaxBlocks)));
  single_pass_kernel<<<blocks, kThreads, 0, stream>>>(in, n, single_pass_partials(scratch),
                                                      single_pass_counter(scratch), out);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)n; (void)scratch; (void)out; (void)stream;
  // @end-solution
}
