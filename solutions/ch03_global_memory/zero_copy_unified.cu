#include "zero_copy_unified.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"

__global__ void saxpy_kernel(const float* __restrict__ in, float* __restrict__ out, float factor,
                             float offset, int n) {
  // @begin-solution: Grid-stride loop: out[i] = in[i] * factor + offset. The kernel does not
  // @hint: care where in and out live: device, mapped host or managed memory all look alike.
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < static_cast<std::size_t>(n); i += stride) {
    out[i] = in[i] * factor + offset;
  }
  // @skeleton: (void)in; (void)out; (void)factor; (void)offset; (void)n;
  // @end-solution
}

namespace {
// Course code, shared by the three entry points.
[[maybe_unused]] void launch(const float* in, float* out, float factor, float offset, int n, cudaStream_t stream) {
  const int threads = 256;
  const int blocks = static_cast<int>(
      std::min<std::size_t>((static_cast<std::size_t>(n) + threads - 1) / threads, 8192));
  saxpy_kernel<<<blocks, threads, 0, stream>>>(in, out, factor, offset, n);
  CUDA_CHECK_LAUNCH();
}
}  // namespace

void saxpy_zero_copy(const float* host_in, float* dev_out, float factor, float offset, int n,
                     cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: cudaHostGetDevicePointer(&device_in, const_cast<float*>(host_in), 0)
  // @hint: gives the address the kernel may use (with UVA it equals host_in, but asking is
  // @hint: portable). Then launch with it.
  float* device_in = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_in),
                                      const_cast<float*>(host_in), 0));
  launch(device_in, dev_out, factor, offset, n, stream);
  // @skeleton: (void)host_in; (void)dev_out; (void)factor; (void)offset; (void)stream;
  // @end-solution
}

void saxpy_managed(const float* in, float* out, float factor, float offset, int n,
                   cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: Just launch: managed pointers work in kernels as they are.
  launch(in, out, factor, offset, n, stream);
  // @skeleton: (void)in; (void)out; (void)factor; (void)offset; (void)stream;
  // @end-solution
}

void saxpy_managed_prefetched(const float* in, float* out, float factor, float offset, int n,
                              cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: Since CUDA 13, cudaMemPrefetchAsync(ptr, bytes, location, flags, stream)
  // @hint: takes a cudaMemLocation: {cudaMemLocationTypeDevice, device} with the device from
  // @hint: cudaGetDevice. Prefetch in and out on `stream`, then launch on the same stream.
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id = device;
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  CUDA_CHECK(cudaMemPrefetchAsync(in, bytes, location, 0, stream));
  CUDA_CHECK(cudaMemPrefetchAsync(out, bytes, location, 0, stream));
  launch(in, out, factor, offset, n, stream);
  // @skeleton: (void)in; (void)out; (void)factor; (void)offset; (void)stream;
  // @end-solution
}
