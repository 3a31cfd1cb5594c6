#include "constant_broadcast_baseline.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"
#include "course/device_fill.cuh"
#include "course/device_random.h"

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;  // 2048 threads: a full SM on every GPU since Volta
constexpr int kWarpSize = 32;

__constant__ ConstantBroadcastCurve c_serialised_curve;

__global__ void __launch_bounds__(kThreads)
    serialised_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < static_cast<std::size_t>(n); i += stride) {
    const float xi = x[i];
    float p = c_serialised_curve.polynomial[kConstantBroadcastTerms - 1];
#pragma unroll
    for (int k = kConstantBroadcastTerms - 2; k >= 0; --k)
      p = fmaf(p, xi, c_serialised_curve.polynomial[k]);

    const float u = xi * static_cast<float>(kConstantBroadcastSegments);
    const int s = min(max(static_cast<int>(floorf(u)), 0), kConstantBroadcastSegments - 1);
    const float t = u - static_cast<float>(s);
    // Lane-dependent s: each of these four reads is replayed once per distinct segment.
    const float* a = c_serialised_curve.segments[s];
    y[i] = p + fmaf(fmaf(fmaf(a[3], t, a[2]), t, a[1]), t, a[0]);
  }
}

// One segment per aligned group of 32 elements, anywhere inside it.
struct WarpUniformValue {
  std::uint64_t seed;
  __device__ float operator()(std::size_t i) const {
    const unsigned segment = course::hashed_uint(i / kWarpSize, seed) % kConstantBroadcastSegments;
    const float within = course::hashed_float(i, seed, 0.0f, 1.0f);  // [0, 1), 24 bits
    // Rounded to float, segment + within can reach segment + 1: keep it inside the segment.
    const float u = fminf(static_cast<float>(segment) + within,
                          nextafterf(static_cast<float>(segment + 1), 0.0f));
    return u / static_cast<float>(kConstantBroadcastSegments);
  }
};

}  // namespace

void constant_broadcast_serialised_set_curve(const ConstantBroadcastCurve& curve) {
  CUDA_CHECK(cudaMemcpyToSymbol(c_serialised_curve, &curve, sizeof(curve)));
  // A pageable copy may still be on its way when cudaMemcpyToSymbol returns, and launches on
  // non-blocking streams are not ordered after the legacy stream it runs on.
  CUDA_CHECK(cudaDeviceSynchronize());
}

void constant_broadcast_serialised(const float* x, float* y, int n, cudaStream_t stream) {
  if (n <= 0) return;
  const int blocks = static_cast<int>(std::min<long long>(
      (static_cast<long long>(n) + kThreads - 1) / kThreads, course::sm_count() * kBlocksPerSm));
  serialised_kernel<<<blocks, kThreads, 0, stream>>>(x, y, n);
  CUDA_CHECK_LAUNCH();
}

void constant_broadcast_fill_warp_uniform(float* x, std::size_t n, std::uint64_t seed,
                                          cudaStream_t stream) {
  course::fill_by_index(x, n, stream, WarpUniformValue{seed});
}
