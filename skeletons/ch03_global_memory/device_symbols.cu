#include "device_symbols.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"

// TODO: Declare the array at file scope with the __device__ qualifier:
//       __device__ float d_coefficients[kCoefficientCount];
// (declare d_coefficients here)

__global__ void apply_coefficients_kernel(const float* __restrict__ in, float* __restrict__ out,
                                          int n) {
  // TODO: Grid-stride loop over i; read d_coefficients[i % kCoefficientCount]
  //       directly: inside a kernel the symbol is just a global array.
  (void)in; (void)out; (void)n;
}

void set_coefficients(const float* host, int first, int count) {
  if (count <= 0) return;
  // TODO: cudaMemcpyToSymbol(symbol, src, bytes, offset_in_bytes) with the kind
  //       cudaMemcpyHostToDevice. The symbol is passed itself, not its address or its name.
  (void)host; (void)first;
}

void get_coefficients(float* host, int first, int count) {
  if (count <= 0) return;
  // TODO: cudaMemcpyFromSymbol(dst, symbol, bytes, offset_in_bytes, kind).
  (void)host; (void)first;
}

float* coefficients_address() {
  // TODO: cudaGetSymbolAddress(&pointer, symbol) gives the device address; the
  //       host must never dereference it, but cudaMemcpy and kernels can use it.
  return nullptr;
}

void apply_coefficients(const float* in, float* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // TODO: Launch apply_coefficients_kernel on `stream` with enough blocks to
  //       fill the GPU, then CUDA_CHECK_LAUNCH().
  (void)in; (void)out; (void)stream;
}
