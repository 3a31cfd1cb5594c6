// Exercise ch03 / zero_copy_unified: a kernel that reads host memory directly (zero-copy), and
// the same work on managed (unified) memory with and without prefetching.
//
// Frozen API. Every function computes out[i] = in[i] * factor + offset for i in [0, n),
// enqueued on `stream`, returning without waiting.
//
//   saxpy_zero_copy(host_in, dev_out, ...)
//       host_in was allocated by the caller with cudaHostAlloc(..., cudaHostAllocMapped): page-
//       locked host memory mapped into the device's address space. Get the device-side
//       pointer with cudaHostGetDevicePointer and let the kernel read host memory over the
//       bus. dev_out is ordinary device memory.
//   saxpy_managed(in, out, ...)
//       in and out come from cudaMallocManaged and were last written by the host. Launch the
//       kernel as is: pages move to the GPU on demand, one page fault at a time.
//   saxpy_managed_prefetched(in, out, ...)
//       the same, but first prefetch both ranges to the current device with
//       cudaMemPrefetchAsync on `stream`, so they arrive in bulk before the kernel starts.
#pragma once

#include <cuda_runtime.h>

void saxpy_zero_copy(const float* host_in, float* dev_out, float factor, float offset, int n,
                     cudaStream_t stream);
void saxpy_managed(const float* in, float* out, float factor, float offset, int n,
                   cudaStream_t stream);
void saxpy_managed_prefetched(const float* in, float* out, float factor, float offset, int n,
                              cudaStream_t stream);
