#include "adaptive_mandelbrot.h"

#include <climits>
#include <cstddef>

#include "course/check.h"

namespace {

// Every grid of region_kernel has blocks of this many threads, a whole number of warps.
constexpr int kThreads = 256;

// @begin-solution: Helpers for the border, if you want them: how many pixels the outer ring of
// @hint: a w x h region has (all of them when w or h is 1 or 2), and which pixel ring index b is.
// Pixels on the outer ring of a w x h region: every pixel when it is one row or one column.
__device__ int border_length(int w, int h) {
  if (w == 1 || h == 1) return w * h;
  return 2 * w + 2 * (h - 2);
}

// Offset from the region's corner of ring pixel `b`: the first row, the last row, then the
// first and the last columns between them.
__device__ int2 border_pixel(int b, int w, int h) {
  if (b < w) return make_int2(b, 0);
  b -= w;
  if (h > 1) {
    if (b < w) return make_int2(b, h - 1);
    b -= w;
  }
  const int middle_rows = h - 2;
  if (b < middle_rows) return make_int2(0, 1 + b);
  return make_int2(w - 1, 1 + b - middle_rows);
}
// @end-solution

}  // namespace

// One block per region: cell (blockIdx.x, blockIdx.y) of the area (area_x, area_y, area_w,
// area_h) cut into squares of `side`, clipped to the area. The host's grid covers the image
// (the area) with the initial regions; a child grid covers the region that launched it.
__global__ void __launch_bounds__(kThreads)
    region_kernel(int* dwells, int width, MandelbrotView view, MandelbrotParams params,
                  int area_x, int area_y, int area_w, int area_h, int side, int depth) {
  // @begin-solution: This block's region is x = area_x + blockIdx.x * side (y alike), clipped
  // @hint: to the area: w = min(side, area_x + area_w - x), h alike.
  // @hint: 1. The border: each thread takes ring pixels threadIdx.x, + blockDim.x, ... (write
  // @hint:    helpers that count the ring and map an index to a pixel), computes pixel_dwell
  // @hint:    and keeps the lowest and the highest dwell it saw.
  // @hint: 2. Agree: reduce lowest and highest over the block (__shfl_xor_sync within each
  // @hint:    warp, one slot per warp in __shared__ arrays, __syncthreads(), then every thread
  // @hint:    reads the slots). The ring has one dwell exactly when lowest == highest.
  // @hint: 3. One dwell: every thread fills its share of the region (i = threadIdx.x; i < w*h;
  // @hint:    i += blockDim.x) with it. Otherwise, with child_side = ceil(side / k): when
  // @hint:    depth + 1 < max_depth and child_side >= min_size, thread 0 alone launches ONE
  // @hint:    child grid of ceil(w / child_side) x ceil(h / child_side) blocks of region_kernel
  // @hint:    over this region, at depth + 1, into cudaStreamFireAndForget (the block need not
  // @hint:    wait: nothing it does afterwards reads the children's work); else the block
  // @hint:    computes every pixel of the region with pixel_dwell.
  const int x = area_x + static_cast<int>(blockIdx.x) * side;
  const int y = area_y + static_cast<int>(blockIdx.y) * side;
  const int w = min(side, area_x + area_w - x);
  const int h = min(side, area_y + area_h - y);

  int lowest = INT_MAX;
  int highest = INT_MIN;
  const int ring = border_length(w, h);
  for (int b = threadIdx.x; b < ring; b += kThreads) {
    const int2 offset = border_pixel(b, w, h);
    const int dwell = pixel_dwell(x + offset.x, y + offset.y, view, params.max_dwell);
    lowest = min(lowest, dwell);
    highest = max(highest, dwell);
  }
  for (int lane_mask = 16; lane_mask > 0; lane_mask /= 2) {
    lowest = min(lowest, __shfl_xor_sync(0xffffffffu, lowest, lane_mask));
    highest = max(highest, __shfl_xor_sync(0xffffffffu, highest, lane_mask));
  }
  constexpr int kWarps = kThreads / 32;
  __shared__ int warp_lowest[kWarps];
  __shared__ int warp_highest[kWarps];
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) {
    warp_lowest[warp] = lowest;
    warp_highest[warp] = highest;
  }
  // Every thread reads every warp's slot: all of them must be written first.
  __syncthreads();
  for (int other = 0; other < kWarps; ++other) {
    lowest = min(lowest, warp_lowest[other]);
    highest = max(highest, warp_highest[other]);
  }

  const int pixels = w * h;
  if (lowest == highest) {
    for (int i = threadIdx.x; i < pixels; i += kThreads)
      dwells[static_cast<std::size_t>(y + i / w) * width + x + i % w] = lowest;
    return;
  }
  const int child_side = (side + params.subdivisions - 1) / params.subdivisions;
  if (depth + 1 < params.max_depth && child_side >= params.min_size) {
    // One launch for all the sub-regions, not one per sub-region: a block per sub-region, and
    // a twentieth of the launches the device runtime must queue.
    if (threadIdx.x == 0) {
      const dim3 children((w + child_side - 1) / child_side, (h + child_side - 1) / child_side);
      region_kernel<<<children, kThreads, 0, cudaStreamFireAndForget>>>(
          dwells, width, view, params, x, y, w, h, child_side, depth + 1);
      // A launch that fails here (a bad configuration, too many launches pending, the device
      // out of memory) leaves the region unwritten; only cudaGetLastError() here, on the
      // device, would see the error, and the tests name the pixels it left.
    }
    return;
  }
  for (int i = threadIdx.x; i < pixels; i += kThreads) {
    const int px = x + i % w;
    const int py = y + i / w;
    dwells[static_cast<std::size_t>(py) * width + px] =
        pixel_dwell(px, py, view, params.max_dwell);
  }
  // @skeleton: (void)dwells; (void)width; (void)view; (void)params; (void)area_x; (void)area_y;
  // @skeleton: (void)area_w; (void)area_h; (void)side; (void)depth;
  // @end-solution
}

void mandelbrot_adaptive(int* dwells, int width, int height, const MandelbrotView& view,
                         const MandelbrotParams& params, cudaStream_t stream) {
  // @begin-solution: One host launch on `stream`: region_kernel over the whole image (area
  // @hint: 0, 0, width, height) with side initial_size and depth 0, a grid of
  // @hint: ceil(width / initial_size) x ceil(height / initial_size) blocks of kThreads, then
  // @hint: CUDA_CHECK_LAUNCH(). The child grids it starts belong to it: the stream treats the
  // @hint: whole tree as that one launch, so nothing here waits.
  const int side = params.initial_size;
  const dim3 regions((width + side - 1) / side, (height + side - 1) / side);
  region_kernel<<<regions, kThreads, 0, stream>>>(dwells, width, view, params, 0, 0, width,
                                                  height, side, 0);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)dwells; (void)width; (void)height; (void)view; (void)params; (void)stream;
  // @end-solution
}
