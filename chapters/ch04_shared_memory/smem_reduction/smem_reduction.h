// Exercise ch04 / smem_reduction: an exact integer sum through a block's dynamic shared memory.
//
// Frozen API: the tests and the benchmark call exactly this.
//   in          device pointer to n ints, at any int-aligned address (not only the start of an
//               allocation); never written.
//   n           0 <= n < 2^31; n = 0 writes 0 to *out.
//   block_size  threads per block, chosen by the caller: 32, 64, 128, 256, 512 or 1024. The
//               block's shared array must be sized from it at launch (extern __shared__ and the
//               third launch parameter), not fixed at compile time. Other values throw
//               std::invalid_argument before anything is enqueued.
//   out         device pointer to one long long that receives the exact sum.
//   stream      all work goes on this stream; the function returns without waiting.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

inline bool smem_reduction_block_size_supported(int block_size) {
  return block_size >= 32 && block_size <= 1024 && (block_size & (block_size - 1)) == 0;
}

inline void smem_reduction_require_block_size(int block_size) {
  if (!smem_reduction_block_size_supported(block_size))
    throw std::invalid_argument("block_size " + std::to_string(block_size) +
                                " is not one of 32, 64, 128, 256, 512, 1024");
}

void smem_reduction(const int* in, int n, int block_size, long long* out, cudaStream_t stream);
