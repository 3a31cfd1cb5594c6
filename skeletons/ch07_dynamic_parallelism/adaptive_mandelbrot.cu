#include "adaptive_mandelbrot.h"

#include <climits>
#include <cstddef>

#include "course/check.h"

namespace {

// Every grid of region_kernel has blocks of this many threads, a whole number of warps.
constexpr int kThreads = 256;

// TODO: Helpers for the border, if you want them: how many pixels the outer ring of
//       a w x h region has (all of them when w or h is 1 or 2), and which pixel ring index b is.

}  // namespace

// One block per region: cell (blockIdx.x, blockIdx.y) of the area (area_x, area_y, area_w,
// area_h) cut into squares of `side`, clipped to the area. The host's grid covers the image
// (the area) with the initial regions; a child grid covers the region that launched it.
__global__ void __launch_bounds__(kThreads)
    region_kernel(int* dwells, int width, MandelbrotView view, MandelbrotParams params,
                  int area_x, int area_y, int area_w, int area_h, int side, int depth) {
  // TODO: This block's region is x = area_x + blockIdx.x * side (y alike), clipped
  //       to the area: w = min(side, area_x + area_w - x), h alike.
  //       1. The border: each thread takes ring pixels threadIdx.x, + blockDim.x, ... (write
  //       helpers that count the ring and map an index to a pixel), computes pixel_dwell
  //       and keeps the lowest and the highest dwell it saw.
  //       2. Agree: reduce lowest and highest over the block (__shfl_xor_sync within each
  //       warp, one slot per warp in __shared__ arrays, __syncthreads(), then every thread
  //       reads the slots). The ring has one dwell exactly when lowest == highest.
  //       3. One dwell: every thread fills its share of the region (i = threadIdx.x; i < w*h;
  //       i += blockDim.x) with it. Otherwise, with child_side = ceil(side / k): when
  //       depth + 1 < max_depth and child_side >= min_size, thread 0 alone launches ONE
  //       child grid of ceil(w / child_side) x ceil(h / child_side) blocks of region_kernel
  //       over this region, at depth + 1, into cudaStreamFireAndForget (the block need not
  //       wait: nothing it does afterwards reads the children's work); else the block
  //       computes every pixel of the region with pixel_dwell.
  (void)dwells; (void)width; (void)view; (void)params; (void)area_x; (void)area_y;
  (void)area_w; (void)area_h; (void)side; (void)depth;
}

void mandelbrot_adaptive(int* dwells, int width, int height, const MandelbrotView& view,
                         const MandelbrotParams& params, cudaStream_t stream) {
  // TODO: One host launch on `stream`: region_kernel over the whole image (area
  //       0, 0, width, height) with side initial_size and depth 0, a grid of
  //       ceil(width / initial_size) x ceil(height / initial_size) blocks of kThreads, then
  //       CUDA_CHECK_LAUNCH(). The child grids it starts belong to it: the stream treats the
  //       whole tree as that one launch, so nothing here waits.
  (void)dwells; (void)width; (void)height; (void)view; (void)params; (void)stream;
}
