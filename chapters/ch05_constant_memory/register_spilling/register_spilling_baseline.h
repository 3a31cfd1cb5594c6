// Course-owned code the register_spilling benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

// The same 5x5 median filter written the obvious way: each thread copies its window into a
// float[25] array and insertion-sorts it. The sort indexes the array with a position known only
// at run time, so the compiler cannot map it to registers and keeps it in local memory (every
// step an LDL and an STL through the L1). __launch_bounds__(256, 8) asks for full occupancy, which
// caps a thread at 32 registers, and ptxas spills a few more values: -Xptxas -v reports a
// 112-byte stack frame, 8 bytes of spill stores and 16 of spill loads. 32 x 8 threads per block,
// one output pixel per thread.
void register_spilling_local_array(const float* in, float* out, int rows, int cols,
                                   cudaStream_t stream);
