#include "stencil_constant_baseline.h"

#include "course/check.h"
#include "stencil_constant.h"

namespace {

constexpr int kBlock = 256;
constexpr int kPerThread = 4;
constexpr int kOutputs = kBlock * kPerThread;  // one tile per block
constexpr int kHalo = kStencilConstantRadius;

__global__ void __launch_bounds__(kBlock)
    global_coefficients_kernel(const float* __restrict__ in, float* __restrict__ out, int n,
                               const float* __restrict__ coefficients) {
  __shared__ float window[kOutputs + 2 * kHalo];
  // window[w] holds in[start - kHalo + w], zero outside [0, n).
  const long long start = static_cast<long long>(blockIdx.x) * kOutputs;
  // Every load of a thread in flight at once (unrolled), then the halos: the same loading as
  // the course's solution, so the two differ only in where the coefficients live.
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int local = k * kBlock + threadIdx.x;
    window[local + kHalo] = start + local < n ? in[start + local] : 0.0f;
  }
  if (threadIdx.x < 2 * kHalo) {
    const int w = threadIdx.x < kHalo ? threadIdx.x : kOutputs + threadIdx.x;
    const long long src = start - kHalo + w;
    window[w] = (src >= 0 && src < n) ? in[src] : 0.0f;
  }
  __syncthreads();  // outputs read halo values other threads loaded
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int local = k * kBlock + threadIdx.x;
    if (start + local >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int tap = 0; tap < kStencilConstantTaps; ++tap)
      acc = fmaf(coefficients[tap], window[local + tap], acc);
    out[start + local] = acc;
  }
}

}  // namespace

void stencil_constant_global_coefficients(const float* in, float* out, int n,
                                          const float* coefficients, cudaStream_t stream) {
  if (n <= 0) return;
  const unsigned tiles = static_cast<unsigned>((static_cast<long long>(n) + kOutputs - 1) /
                                               kOutputs);
  global_coefficients_kernel<<<tiles, kBlock, 0, stream>>>(in, out, n, coefficients);
  CUDA_CHECK_LAUNCH();
}
