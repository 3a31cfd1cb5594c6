// Course-owned GPU code for zero_copy_unified's benchmark; not part of the student's API.
#pragma once

#include <cuda_runtime.h>

// The benchmark's denominator: saxpy_managed's contract (zero_copy_unified.h) met by the
// course, out[i] = in[i] * factor + offset on managed memory launched as it is, so pages move
// to the GPU on demand. The prefetch speedup is measured against this call, never against the
// student's own saxpy_managed, which a student could make slower to inflate the ratio.
void course_saxpy_managed(const float* in, float* out, float factor, float offset, int n,
                          cudaStream_t stream);
