#include "conv2d_constant_baseline.h"

#include <stdexcept>

#include "conv2d_constant.h"
#include "course/check.h"

namespace {

constexpr int kOut = 32;     // output tile side
constexpr int kRowStep = 8;  // thread rows: each thread filters kOut / kRowStep pixels

template <int R>
__global__ void __launch_bounds__(kOut * kRowStep)
    global_mask_kernel(const float* __restrict__ in, float* __restrict__ out, int width,
                       int height, const float* __restrict__ mask) {
  constexpr int kTaps = 2 * R + 1;
  constexpr int kStaged = kOut + 2 * R;
  __shared__ float patch[kStaged * kStaged];  // patch[py * kStaged + px], clamped input

  const int left = static_cast<int>(blockIdx.x) * kOut - R;
  const int top = static_cast<int>(blockIdx.y) * kOut - R;
  for (int p = threadIdx.y * kOut + threadIdx.x; p < kStaged * kStaged; p += kOut * kRowStep) {
    const int column = min(max(left + p % kStaged, 0), width - 1);
    const int line = min(max(top + p / kStaged, 0), height - 1);
    patch[p] = in[static_cast<long long>(line) * width + column];
  }
  __syncthreads();  // pixels are read by threads other than the one that staged them

  const int px = threadIdx.x;
  if (left + R + px >= width) return;
#pragma unroll
  for (int step = 0; step < kOut / kRowStep; ++step) {
    const int py = threadIdx.y + step * kRowStep;
    if (top + R + py >= height) return;
    const float* window = patch + py * kStaged + px;  // the window's top-left pixel
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < kTaps; ++i)
#pragma unroll
      for (int j = 0; j < kTaps; ++j) acc = fmaf(mask[i * kTaps + j], window[i * kStaged + j], acc);
    out[static_cast<long long>(top + R + py) * width + left + R + px] = acc;
  }
}

template <int R>
void run_global_mask(const float* in, float* out, int width, int height, const float* mask,
                     cudaStream_t stream) {
  const dim3 threads(kOut, kRowStep);
  const dim3 tiles((width + kOut - 1) / kOut, (height + kOut - 1) / kOut);
  global_mask_kernel<R><<<tiles, threads, 0, stream>>>(in, out, width, height, mask);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void conv2d_constant_global_mask(const float* in, float* out, int width, int height,
                                 const float* mask, int radius, cudaStream_t stream) {
  if (width <= 0 || height <= 0) return;
  using Run = void (*)(const float*, float*, int, int, const float*, cudaStream_t);
  static constexpr Run kByRadius[] = {nullptr,
                                      run_global_mask<1>, run_global_mask<2>,
                                      run_global_mask<3>, run_global_mask<4>,
                                      run_global_mask<5>, run_global_mask<6>,
                                      run_global_mask<7>};
  static_assert(sizeof(kByRadius) / sizeof(Run) == kConv2dConstantMaxRadius + 1);
  if (radius < 1 || radius > kConv2dConstantMaxRadius)
    throw std::invalid_argument("conv2d_constant_global_mask: radius must be 1 to 7");
  kByRadius[radius](in, out, width, height, mask, stream);
}
