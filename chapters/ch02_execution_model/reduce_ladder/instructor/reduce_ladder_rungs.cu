// The course's copies of rungs 1, 5 and 6, as written: course-only, kept out of the student
// template (they are working answers to those rungs). The ladder builds the compiled form of this
// file, ../reduce_ladder_rungs.cu, which instructor/compile_rungs.py makes from it: the same
// kernels as PTX in inline assembly, which a student's source may not hold, and which ptxas turns
// into the same machine code (tests/test_template.py compares the two). After changing this
// file, run `python3 chapters/ch02_execution_model/reduce_ladder/instructor/compile_rungs.py`.
#include <cstddef>

#include "course/check.h"
#include "reduce_ladder.h"

// --- the course's copies of rungs 1, 5 and 6 ----------------------------------------------
// One kernel template holds the three: they differ only in how many elements a thread loads
// and in the tree, so the benchmark's baselines cannot drift apart from each other. Each keeps
// its rung's algorithm exactly (the same loads, the same tree, the same shared memory), since
// the rungs' thresholds are speedups over these copies.

namespace {

enum class CourseTree {
  neighbored,             // rung 1: threads whose index is a multiple of 2 * stride add
  interleaved,            // rung 5: stride from blockDim.x / 2 down, one barrier per step
  interleaved_last_warp,  // rung 6: barriers down to 64 values, then warp 0 alone
};

// Warp 0 adds s[0..63] into s[0] with no block barrier. The lanes of a warp are scheduled
// independently since Volta, so __syncwarp separates every step's reads from its writes (no
// lane overwrites a value another still needs) and its writes from the next step's reads.
__device__ __forceinline__ void course_last_warp_sum(long long* s, unsigned lane) {
  long long running = s[lane];
#pragma unroll
  for (unsigned half = 32; half >= 1; half >>= 1) {
    running += s[lane + half];
    __syncwarp();
    s[lane] = running;
    __syncwarp();
  }
}

// Block b sums kLoads * blockDim.x consecutive ints: thread t loads elements b * kLoads *
// blockDim.x + t + k * blockDim.x (k < kLoads, 0 past n), all before its first add so the loads
// are in flight together, then the block runs kTree over its shared values and thread 0 writes
// partial[b].
template <int kLoads, CourseTree kTree>
__global__ void course_rung_kernel(const int* __restrict__ in, int n,
                                   long long* __restrict__ partial) {
  extern __shared__ long long s[];
  const unsigned tid = threadIdx.x;
  const std::size_t step = blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kLoads * step + tid;
  const std::size_t count = static_cast<std::size_t>(n);
  int loaded[kLoads];
#pragma unroll
  for (int k = 0; k < kLoads; ++k) {
    const std::size_t at = first + k * step;
    loaded[k] = at < count ? in[at] : 0;
  }
  long long own = 0;
#pragma unroll
  for (int k = 0; k < kLoads; ++k) own += loaded[k];
  s[tid] = own;
  __syncthreads();

  if constexpr (kTree == CourseTree::neighbored) {
    // Working threads spread over every warp at every step: rung 1's divergence, kept on
    // purpose (and its modulo, which the compiler cannot turn into a mask).
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
      if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
      __syncthreads();
    }
  } else {
    constexpr unsigned kLastBarrierAbove = kTree == CourseTree::interleaved_last_warp ? 32 : 0;
    for (unsigned stride = blockDim.x / 2; stride > kLastBarrierAbove; stride /= 2) {
      if (tid < stride) s[tid] += s[tid + stride];
      __syncthreads();
    }
    if constexpr (kTree == CourseTree::interleaved_last_warp) {
      if (tid < 32) course_last_warp_sum(s, tid);
    }
  }
  if (tid == 0) partial[blockIdx.x] = s[0];
}

// ceil(n / (kLoads * block_size)) blocks of block_size threads, one long long of dynamic shared
// memory per thread, then the second pass (which writes 0 when there is no block: n = 0).
template <int kLoads, CourseTree kTree>
void run_course_rung(const int* in, int n, int block_size, long long* partial, long long* out,
                     cudaStream_t stream) {
  require_reduce_block_size(block_size);
  const std::size_t elements_per_block = static_cast<std::size_t>(kLoads) * block_size;
  const auto blocks = static_cast<int>(
      (static_cast<std::size_t>(n) + elements_per_block - 1) / elements_per_block);
  if (blocks == 0) return reduce_partials(partial, 0, out, stream);
  const std::size_t shared_bytes = sizeof(long long) * block_size;
  course_rung_kernel<kLoads, kTree><<<blocks, block_size, shared_bytes, stream>>>(in, n, partial);
  CUDA_CHECK_LAUNCH();
  reduce_partials(partial, blocks, out, stream);
}

}  // namespace

void course_reduce_v1_neighbored(const int* in, int n, int block_size, long long* partial,
                                 long long* out, cudaStream_t stream) {
  run_course_rung<1, CourseTree::neighbored>(in, n, block_size, partial, out, stream);
}

void course_reduce_v5_unroll8(const int* in, int n, int block_size, long long* partial,
                              long long* out, cudaStream_t stream) {
  run_course_rung<8, CourseTree::interleaved>(in, n, block_size, partial, out, stream);
}

void course_reduce_v6_unroll_last_warp(const int* in, int n, int block_size, long long* partial,
                                       long long* out, cudaStream_t stream) {
  run_course_rung<8, CourseTree::interleaved_last_warp>(in, n, block_size, partial, out, stream);
}
