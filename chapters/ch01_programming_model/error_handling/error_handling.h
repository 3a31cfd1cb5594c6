// Exercise ch01 / error_handling: a complete host-to-device round trip that reports CUDA
// errors to its caller instead of stopping the program or carrying on regardless.
//
// scale_on_device computes host_out[i] = factor * host_in[i] for i in [0, n) on the GPU:
// it allocates one device buffer for the input and one for the output (two cudaMalloc
// calls), copies the input in, launches a kernel with `threads_per_block` threads per block
// and just enough blocks to cover n, copies the result back and frees both buffers.
//
// Frozen API. host_in and host_out are ordinary (pageable) host arrays of n floats.
// Returns
//   cudaSuccess                    when host_out holds the result;
//   cudaSuccess                    for n == 0, touching neither array nor launching anything
//                                  (a grid of zero blocks is itself an invalid configuration);
//   cudaErrorInvalidConfiguration  when threads_per_block is 0 or less: check it before
//                                  dividing by it;
//   the launch's own error         when threads_per_block is above the device's limit of
//                                  1024: let the launch report it. Which error that is
//                                  depends on the toolkit (CUDA 13 on an H200 reports
//                                  cudaErrorInvalidValue, older ones
//                                  cudaErrorInvalidConfiguration); both are accepted;
//   cudaErrorMemoryAllocation      when either device buffer cannot be allocated (for example
//                                  n larger than the GPU's memory);
//   otherwise the first error any CUDA call returned.
// On every path, success or error:
//   * all device memory it allocated is freed (free memory is the same before and after);
//   * no error is left pending: cudaGetLastError() called afterwards returns cudaSuccess, so
//     the next caller does not inherit this call's failure;
//   * the device stays usable: a following valid call succeeds with correct output.
// host_out's contents are unspecified when an error is returned.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

cudaError_t scale_on_device(const float* host_in, float* host_out, std::size_t n, float factor,
                            int threads_per_block);
