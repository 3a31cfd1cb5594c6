// Exercise ch05 / register_spilling: a 5x5 median filter whose 25-value window lives in
// registers, with no local memory and at most 64 registers per thread.
//
// Frozen API: the tests and the benchmark call exactly this.
// `in` holds a rows x cols image in row-major order (pixel (r, c) at in[r * cols + c]); `out`
// receives an image of the same shape where
//   out(r, c) = the median of the 25 values in(clamp_r(r + dr), clamp_c(c + dc)), dr, dc in -2..2,
// the median being the 13th smallest of the 25 counted with repeats, and clamp_r / clamp_c
// limiting a row to [0, rows - 1] and a column to [0, cols - 1] (the border pixels repeat
// outwards, so even a 1 x 1 image has a full window). Values are any floats except NaN:
// infinities, subnormals and both zeros may occur (-0 and +0 compare equal, so where they tie
// either one is a correct answer). The result is one of the inputs: it is compared exactly.
// in and out are device pointers to float-aligned memory and do not overlap. rows and cols may be
// 0 (do nothing) or anything up to rows * cols < 2^31, for example 1,000,003 rows of one pixel.
// Nothing outside out[0, rows * cols) may be written, and `in` must not be modified.
// The work is enqueued on `stream`; the function returns without waiting for it.
//
// The grader also reads the compiled kernel: it must use no local memory (no LDL/STL, 0 bytes of
// stack: no spills, no array indexed with a value known only at run time) and at most
// kRegisterBudget registers per thread.
#pragma once

#include <cuda_runtime.h>

constexpr int kMedianRadius = 2;
constexpr int kMedianWidth = 2 * kMedianRadius + 1;        // 5
constexpr int kMedianWindow = kMedianWidth * kMedianWidth;  // 25 values per output pixel
constexpr int kRegisterBudget = 64;

void median_filter_5x5(const float* in, float* out, int rows, int cols, cudaStream_t stream);
