// Exercise ch03 / device_symbols: a statically allocated __device__ array, reached from the
// host through its symbol.
//
// Frozen API. The student's .cu defines `__device__ float d_coefficients[kCoefficientCount];`
// (file scope, so it lives in global memory for the life of the program) and these functions:
//
//   set_coefficients(host, first, count)  copies host[0..count) into d_coefficients[first..)
//                                         with cudaMemcpyToSymbol (its offset is in bytes).
//   get_coefficients(host, first, count)  the reverse, with cudaMemcpyFromSymbol.
//   coefficients_address()                the symbol's device address, from
//                                         cudaGetSymbolAddress: an ordinary float* that
//                                         cudaMemcpy and kernels accept.
//   apply_coefficients(in, out, n, s)     out[i] = in[i] * d_coefficients[i % kCoefficientCount]
//                                         for i in [0, n): a kernel reads the symbol directly.
//
// first >= 0, count >= 0 and first + count <= kCoefficientCount; count == 0 does nothing.
// set/get are synchronous (they return once the copy is done); apply_coefficients is enqueued
// on `stream` and returns without waiting. in and out are device pointers to n floats.
#pragma once

#include <cuda_runtime.h>

inline constexpr int kCoefficientCount = 1024;

void set_coefficients(const float* host, int first, int count);
void get_coefficients(float* host, int first, int count);
float* coefficients_address();
void apply_coefficients(const float* in, float* out, int n, cudaStream_t stream);
