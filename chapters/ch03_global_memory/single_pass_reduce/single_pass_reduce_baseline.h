// Course-owned code the benchmark compares against; not part of the student's API.
#pragma once

#include <cuda_runtime.h>

// The same sum in two launches (single_pass_reduce_baseline.cu): the first kernel leaves one
// partial sum per block in partial[], at most kSinglePassMaxBlocks of them; the second, one
// block, adds them into *out. The launch boundary is the grid-wide barrier between the two, so
// neither a fence nor a counter is needed. Enqueued on `stream`.
void two_pass_reduce(const int* in, int n, long long* partial, long long* out,
                     cudaStream_t stream);
