#include "error_handling.h"

#include "course/check.h"

__global__ void scale_kernel(const float* in, float* out, std::size_t n, float factor) {
  // @begin-solution: One thread per element; the last block may be partly past n, so guard
  // @hint: the index.
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) out[i] = factor * in[i];
  // @skeleton: (void)in; (void)out; (void)n; (void)factor;
  // @end-solution
}

cudaError_t scale_on_device(const float* host_in, float* host_out, std::size_t n, float factor,
                            int threads_per_block) {
  // @begin-solution: Handle n == 0 and threads_per_block <= 0 first. Then allocate, copy,
  // @hint: launch, check the launch with cudaGetLastError(), copy back. Keep the first
  // @hint: error, free whatever was allocated on every path, and clear the error with
  // @hint: cudaGetLastError() before returning it: a failed call also records it as the
  // @hint: "last error", where the next caller would find it.
  if (n == 0) return cudaSuccess;
  if (threads_per_block <= 0) return cudaErrorInvalidConfiguration;

  float* device_in = nullptr;
  float* device_out = nullptr;
  const std::size_t bytes = n * sizeof(float);
  // Each step runs only while everything before it succeeded; the first failure is kept.
  cudaError_t status = cudaMalloc(&device_in, bytes);
  if (status == cudaSuccess) status = cudaMalloc(&device_out, bytes);
  if (status == cudaSuccess)
    status = cudaMemcpy(device_in, host_in, bytes, cudaMemcpyHostToDevice);
  const std::size_t blocks = (n + threads_per_block - 1) / threads_per_block;
  // gridDim.x holds at most 2^31 - 1 blocks; more would be silently truncated by the cast.
  if (status == cudaSuccess && blocks > 0x7fffffffu) status = cudaErrorInvalidConfiguration;
  if (status == cudaSuccess) {
    scale_kernel<<<static_cast<unsigned>(blocks), threads_per_block>>>(device_in, device_out, n,
                                                                        factor);
    // A bad configuration never starts the kernel; only cudaGetLastError reports it.
    status = cudaGetLastError();
  }
  // The copy waits for the kernel, so errors raised while it ran show up here.
  if (status == cudaSuccess)
    status = cudaMemcpy(host_out, device_out, bytes, cudaMemcpyDeviceToHost);

  // cudaFree(nullptr) is a no-op, so one clean-up path serves every outcome.
  const cudaError_t free_in = cudaFree(device_in);
  const cudaError_t free_out = cudaFree(device_out);
  if (status == cudaSuccess) status = free_in != cudaSuccess ? free_in : free_out;
  (void)cudaGetLastError();  // leave nothing pending for the next caller
  return status;
  // @skeleton: (void)host_in; (void)host_out; (void)n; (void)factor; (void)threads_per_block;
  // @skeleton: return cudaErrorNotSupported;
  // @end-solution
}
