#include "adaptive_mandelbrot_baseline.h"

#include <cstddef>

#include "course/check.h"

namespace {

// 32 x 8: a warp is 32 neighbouring pixels of one row, so its stores coalesce and its threads
// mostly share a dwell (they diverge only where the row crosses a dwell band).
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

__global__ void __launch_bounds__(kBlockX * kBlockY)
    flat_dwell_kernel(int* __restrict__ dwells, int width, int height, MandelbrotView view,
                      int max_dwell) {
  const int px = blockIdx.x * kBlockX + threadIdx.x;
  const int py = blockIdx.y * kBlockY + threadIdx.y;
  if (px < width && py < height)
    dwells[static_cast<std::size_t>(py) * width + px] = pixel_dwell(px, py, view, max_dwell);
}

}  // namespace

void mandelbrot_flat(int* dwells, int width, int height, const MandelbrotView& view,
                     int max_dwell, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((width + kBlockX - 1) / kBlockX, (height + kBlockY - 1) / kBlockY);
  flat_dwell_kernel<<<grid, block, 0, stream>>>(dwells, width, height, view, max_dwell);
  CUDA_CHECK_LAUNCH();
}
