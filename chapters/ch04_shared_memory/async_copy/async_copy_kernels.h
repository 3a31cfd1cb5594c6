// The kernel of async_copy's course baseline (async_copy_baseline.cu launches it).
// async_copy_kernels.cu holds it compiled to PTX; its readable source is course-only, being
// the exercise's tiling without the asynchronous copies (scripts/compile_course_kernels.py
// writes the one from the other).
#pragma once

#include <cuda_runtime.h>

#include "async_copy.h"

namespace course_async_copy {

constexpr int kThreads = 256;
constexpr int kTile = 2048;  // outputs per tile: eight per thread
constexpr int kR = kAsyncCopyRadius;
constexpr int kSpan = kTile + 2 * kR;

// The stencil over tiles of kTile outputs staged in shared memory with plain loads and stores,
// tiles grid-strided over the blocks; blocks of kThreads threads.
__global__ void __launch_bounds__(kThreads)
    sync_tiles_kernel(const float* __restrict__ in, float* __restrict__ out, int n,
                      int num_tiles);

}  // namespace course_async_copy
