#include "device_symbols.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"

// @begin-solution: Declare the array at file scope with the __device__ qualifier:
// @hint: __device__ float d_coefficients[kCoefficientCount];
__device__ float d_coefficients[kCoefficientCount];
// @skeleton: // (declare d_coefficients here)
// @end-solution

__global__ void apply_coefficients_kernel(const float* __restrict__ in, float* __restrict__ out,
                                          int n) {
  // @begin-solution: Grid-stride loop over i; read d_coefficients[i % kCoefficientCount]
  // @hint: directly: inside a kernel the symbol is just a global array.
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < static_cast<std::size_t>(n); i += stride) {
    out[i] = in[i] * d_coefficients[i % kCoefficientCount];
  }
  // @skeleton: (void)in; (void)out; (void)n;
  // @end-solution
}

void set_coefficients(const float* host, int first, int count) {
  if (count <= 0) return;
  // @begin-solution: cudaMemcpyToSymbol(symbol, src, bytes, offset_in_bytes) with the kind
  // @hint: cudaMemcpyHostToDevice. The symbol is passed itself, not its address or its name.
  CUDA_CHECK(cudaMemcpyToSymbol(d_coefficients, host, count * sizeof(float),
                                first * sizeof(float), cudaMemcpyHostToDevice));
  // @skeleton: (void)host; (void)first;
  // @end-solution
}

void get_coefficients(float* host, int first, int count) {
  if (count <= 0) return;
  // @begin-solution: cudaMemcpyFromSymbol(dst, symbol, bytes, offset_in_bytes, kind).
  CUDA_CHECK(cudaMemcpyFromSymbol(host, d_coefficients, count * sizeof(float),
                                  first * sizeof(float), cudaMemcpyDeviceToHost));
  // @skeleton: (void)host; (void)first;
  // @end-solution
}

float* coefficients_address() {
  // @begin-solution: cudaGetSymbolAddress(&pointer, symbol) gives the device address; the
  // @hint: host must never dereference it, but cudaMemcpy and kernels can use it.
  void* address = nullptr;
  CUDA_CHECK(cudaGetSymbolAddress(&address, d_coefficients));
  return static_cast<float*>(address);
  // @skeleton: return nullptr;
  // @end-solution
}

void apply_coefficients(const float* in, float* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: Launch apply_coefficients_kernel on `stream` with enough blocks to
  // @hint: fill the GPU, then CUDA_CHECK_LAUNCH().
  const int threads = 256;
  const int blocks = static_cast<int>(
      std::min<std::size_t>((static_cast<std::size_t>(n) + threads - 1) / threads, 4096));
  apply_coefficients_kernel<<<blocks, threads, 0, stream>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)stream;
  // @end-solution
}
