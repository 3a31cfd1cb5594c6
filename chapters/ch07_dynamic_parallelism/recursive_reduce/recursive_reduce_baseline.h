// Course-owned code the recursive_reduce benchmark compares against (not student code: the
// grader rejects a submission that calls it).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// Chapter 02's flat reduction, launched from the host: pass 1 sums each tile of 2048 ints into
// partials[b] (one block of 256 threads per tile, eight loads per thread, warp shuffles), pass 2
// is one block that sums those partials and writes *result; n = 0 writes 0. partials holds
// ceil(n / 2048) long longs (recursive_reduce_scratch_size(n) is more than enough). Both passes
// are enqueued on `stream`, one after the other; returns without waiting. The same tiles and
// the same in-block sum as the exercise's solution, so the ratio of the two measures what
// launching the later levels from the device costs, not a different kernel.
void course_flat_reduce(const int* in, long long* partials, std::size_t n, long long* result,
                        cudaStream_t stream);
