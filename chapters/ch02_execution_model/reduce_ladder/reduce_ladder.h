// Shared by the eight rungs of the reduction ladder (reduce_v1_* ... reduce_v8_*): the rules
// every rung's launcher follows, and the course-owned helpers defined in reduce_ladder_baseline.cu
// (compiled once, linked into every rung's test and benchmark).
//
// Every rung sums n ints exactly into one long long. The launchers all have this shape:
//
//   void reduce_vK_name(const int* in, int n, int block_size, long long* partial,
//                       long long* out, cudaStream_t stream);
//
//   in          device pointer to n ints, at any int-aligned address (not only the start of an
//               allocation); never written.
//   n           0 <= n < 2^31; n = 0 writes 0 to *out.
//   block_size  threads per block: 64, 128, 256, 512 or 1024 (a power of two, at least two
//               warps, so every rung's tree and last-warp step are well defined). Other values
//               throw std::invalid_argument.
//   partial     device scratch of reduce_partial_capacity(n, block_size) long longs: one per
//               block_size input elements, which is enough for one partial sum per block on
//               every rung. Its contents on entry are garbage.
//   out         device pointer to one long long that receives the sum.
//   stream      all work goes on this stream; the launcher returns without waiting.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

inline bool reduce_block_size_supported(int block_size) {
  return block_size >= 64 && block_size <= 1024 && (block_size & (block_size - 1)) == 0;
}

inline void require_reduce_block_size(int block_size) {
  if (!reduce_block_size_supported(block_size))
    throw std::invalid_argument("block_size " + std::to_string(block_size) +
                                " is not one of 64, 128, 256, 512, 1024");
}

// How many long longs `partial` holds: ceil(n / block_size), at least 1.
inline std::size_t reduce_partial_capacity(int n, int block_size) {
  const std::size_t blocks =
      (static_cast<std::size_t>(n > 0 ? n : 0) + block_size - 1) / static_cast<std::size_t>(block_size);
  return blocks > 0 ? blocks : 1;
}

// --- course-owned, defined in reduce_ladder_baseline.cu -----------------------------------

// Second pass: *out = partial[0] + ... + partial[count - 1] (count >= 0; 0 gives 0). Enqueued
// on `stream`. The rungs that leave one partial sum per block call this to finish.
void reduce_partials(const long long* partial, int count, long long* out, cudaStream_t stream);

// CUB's DeviceReduce::Sum of n ints into one long long: the baseline of rungs 1 and 8, and the
// context every rung's benchmark reports.
std::size_t cub_reduce_sum_temp_bytes(int n);
void cub_reduce_sum(const int* in, int n, long long* out, void* temp, std::size_t temp_bytes,
                    cudaStream_t stream);

// The course's own copies of three rungs, with the rungs' launcher signature and rules: the
// baselines the benchmark times in the same run, so that rungs 2 to 7 are scored as speedups
// over an earlier rung, which stay the same from one GPU to another where a fraction of CUB
// (bandwidth bound) does not. Course code: a rung never calls them.
//   course_reduce_v1_neighbored        rung 1: one element per thread, neighbored pairs
//   course_reduce_v5_unroll8           rung 5: eight elements per thread, interleaved tree
//   course_reduce_v6_unroll_last_warp  rung 6: rung 5, the last warp finished with __syncwarp
void course_reduce_v1_neighbored(const int* in, int n, int block_size, long long* partial,
                                 long long* out, cudaStream_t stream);
void course_reduce_v5_unroll8(const int* in, int n, int block_size, long long* partial,
                              long long* out, cudaStream_t stream);
void course_reduce_v6_unroll_last_warp(const int* in, int n, int block_size, long long* partial,
                                       long long* out, cudaStream_t stream);
