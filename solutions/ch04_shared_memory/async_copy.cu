#include "async_copy.h"

#include <cooperative_groups.h>
#include <cuda/pipeline>

#include <algorithm>

#include "course/check.h"

namespace cg = cooperative_groups;

// A __shared__ cuda::pipeline_shared_state is not constructed like an ordinary variable (no
// __shared__ variable is); cuda::make_pipeline initialises it, collectively, before first use.
// This silences nvcc's warning about its skipped dynamic initialisation.
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 2048;  // outputs per tile: eight per thread
constexpr int kR = kAsyncCopyRadius;
constexpr int kSpan = kTile + 2 * kR;  // a tile and its halo on both sides
// Keeps the second of two buffers [2][kSpan] 16-byte aligned, as the fastest copies need.
static_assert(kSpan * sizeof(float) % 16 == 0, "a staged span must be a multiple of 16 bytes");

}  // namespace

// Each block walks tiles blockIdx.x, blockIdx.x + gridDim.x, ... While it computes tile t from
// one buffer, the copy of its next tile into the other buffer is already in flight.
__global__ void __launch_bounds__(kThreads)
    async_copy_kernel(const float* __restrict__ in, float* __restrict__ out, int n,
                      int num_tiles) {
  // @begin-solution: Two shared buffers of kSpan floats and a
  // @hint: cuda::pipeline_shared_state<cuda::thread_scope_block, 2>; make the block's pipeline
  // @hint: with cuda::make_pipeline(cg::this_thread_block(), &state). To stage a tile: clip
  // @hint: its span [tile * kTile - kR, tile * kTile + kTile + kR) to [0, n), then
  // @hint: producer_acquire(), cuda::memcpy_async(block, dst, in + lo, bytes, pipe),
  // @hint: producer_commit(). Stage the block's first tile, then per tile: stage the next one
  // @hint: (if any) into the other buffer, consumer_wait(), compute (treat positions outside
  // @hint: [0, n) as 0 instead of reading them), consumer_release(). The pipeline's barriers
  // @hint: order the copies and the reads for the whole block: no __syncthreads() needed.
  constexpr int kStages = 2;             // double buffering
  __shared__ alignas(16) float buf[kStages][kSpan];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, kStages> state;
  const auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);

  // Every thread calls this with the same tile: the copy is collective over the block.
  auto stage = [&](int tile, int slot) {
    const long long lo = static_cast<long long>(tile) * kTile - kR;
    const long long first = std::max<long long>(lo, 0);
    const long long last = std::min<long long>(lo + kSpan, n);
    pipe.producer_acquire();
    if (first < last)
      cuda::memcpy_async(block, buf[slot] + (first - lo), in + first,
                         sizeof(float) * static_cast<std::size_t>(last - first), pipe);
    pipe.producer_commit();
  };

  int slot = 0;
  if (blockIdx.x < num_tiles) stage(blockIdx.x, 0);
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x, slot ^= 1) {
    const int next = tile + gridDim.x;
    if (next < num_tiles) stage(next, slot ^ 1);  // its slot was released last iteration
    pipe.consumer_wait();                         // tile's copy has landed, for every thread
    const long long lo = static_cast<long long>(tile) * kTile - kR;
    for (int e = threadIdx.x; e < kTile; e += kThreads) {
      const long long i = lo + kR + e;
      if (i >= n) break;
      float sum = 0.0f;
#pragma unroll
      for (int d = -kR; d <= kR; ++d) {
        const long long g = i + d;
        // Outside [0, n) the buffer was never written: those neighbours are 0.
        const float v = (g >= 0 && g < n) ? buf[slot][e + kR + d] : 0.0f;
        sum += static_cast<float>(kR + 1 - (d < 0 ? -d : d)) * v;
      }
      out[i] = sum * (1.0f / 25.0f);
    }
    pipe.consumer_release();  // the buffer may now be refilled
  }
  // @skeleton: (void)in; (void)out; (void)n; (void)num_tiles;
  // @end-solution
}

void async_copy(const float* in, float* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  const int num_tiles = (n + kTile - 1) / kTile;
  // @begin-solution: One block of kThreads per tile of kTile outputs, but no more than a few
  // @hint: blocks per SM (each block then loops over several tiles, which is what gives the
  // @hint: double buffer something to overlap); launch on `stream`, then CUDA_CHECK_LAUNCH().
  // Queried once: the number of SMs sets how many blocks fill the GPU.
  static const int sms = [] {
    int device = 0, value = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device));
    return value;
  }();
  // Four blocks of 256 threads per SM, each with two 8 KiB buffers.
  const int blocks = std::min(num_tiles, sms * 4);
  async_copy_kernel<<<blocks, kThreads, 0, stream>>>(in, out, n, num_tiles);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)num_tiles; (void)stream;
  // @end-solution
}
