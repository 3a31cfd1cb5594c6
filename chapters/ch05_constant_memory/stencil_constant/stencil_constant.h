// Exercise ch05 / stencil_constant: a 1D 9-point stencil whose coefficients live in constant
// memory, over input tiles staged in shared memory.
//
// Frozen API: the tests and the benchmark call exactly this.
//
// stencil_constant_set_coefficients(c): c points to kStencilConstantTaps floats in host memory.
// Copy them into your own __constant__ array with cudaMemcpyToSymbol, and return only once they
// are in device memory, so that a kernel enqueued afterwards on any stream, including a
// non-blocking one, reads them (from pageable host memory cudaMemcpyToSymbol may return before
// its copy has landed: wait for it). The caller may reuse c as soon as the call returns. The
// coefficients stay in force for every later stencil_constant call until the next set call.
// The caller never calls it while a stencil_constant kernel may still be running: constant
// memory is one copy for the whole device, and rewriting it under a running kernel would race.
//
// Why setting the coefficients is your function: a __constant__ variable belongs to the
// translation unit that declares it. The course's code is compiled separately (no relocatable
// device code), so it cannot name your symbol; only code in your file can fill it.
//
// stencil_constant(in, out, n, stream): for 0 <= i < n,
//   out[i] = sum over d = -4..4 of c[d + 4] * in[i + d],   with in[j] taken as 0 outside [0, n),
// where c is the set of coefficients last set. Accumulate in float, starting from 0, in the
// order d = -4, -3, ..., 4, one fused multiply-add per term (sum = fmaf(c[d + 4], x, sum)):
// a kernel that does exactly this matches the tests' reference bit for bit; any other order
// differs by a few units in the last place, which the tests' tolerance accepts.
// in and out are device pointers to float-aligned memory that do not overlap. 0 <= n < 2^31;
// n = 0 does nothing. Nothing outside out[0, n) may be written, `in` must not be modified, and
// nothing outside in[0, n) may be read. The work is enqueued on `stream`; the function returns
// without waiting for it.
#pragma once

#include <cuda_runtime.h>

constexpr int kStencilConstantRadius = 4;
constexpr int kStencilConstantTaps = 2 * kStencilConstantRadius + 1;

void stencil_constant_set_coefficients(const float* coefficients);
void stencil_constant(const float* in, float* out, int n, cudaStream_t stream);
