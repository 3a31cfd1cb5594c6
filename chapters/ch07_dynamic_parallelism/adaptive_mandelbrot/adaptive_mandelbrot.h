// Exercise ch07 / adaptive_mandelbrot: the Mandelbrot set's escape-time image by Mariani-Silver
// subdivision, with dynamic parallelism: a region whose border has one dwell is filled without
// computing its inside; any other region is cut into sub-regions, launched from the device as
// a child grid, down to a depth limit.
//
// Frozen API: the tests and the benchmark call exactly this.
//
// The image is width x height pixels, row-major: dwells[py * width + px] is pixel (px, py)'s.
// A pixel's dwell is pixel_dwell(px, py, view, params.max_dwell), below. The image the
// launcher writes is the one the algorithm below defines, pixel for pixel (it is not the image
// of pixel_dwell everywhere: a region filled from its border hides what is inside); the tests
// compare it exactly with a CPU version of the same algorithm.
//
// The algorithm. A region is a rectangle of pixels (x, y, w, h), w, h >= 1, with a side s (the
// square it was cut as, before clipping) and a depth d.
//   1. The image is cut into ceil(width / S) x ceil(height / S) regions, S = initial_size:
//      region (i, j) starts at (i * S, j * S), is clipped to the image (w = min(S, width - i*S),
//      h = min(S, height - j*S)), and has s = S, d = 0.
//   2. A region's border is its outer ring: the pixels of its first and last rows and of its
//      first and last columns (every pixel when w <= 2 or h <= 2).
//      a. When every border pixel has the same dwell D, every pixel of the region gets D.
//      b. Otherwise, with k = subdivisions and c = ceil(s / k): when d + 1 < max_depth and
//         c >= min_size, the region is cut into the sub-regions that start at (x + a*c, y + b*c)
//         for 0 <= a, b < k and lie (at least partly) inside it, each clipped to the region,
//         with s = c and depth d + 1; each goes through step 2 on its own.
//      c. Otherwise every pixel of the region gets its own pixel_dwell.
// So max_depth = 1 fills or computes each initial region and never subdivides.
//
// How (what the technique stage checks, and what makes it fast): one block per region. The
// block computes its border's dwells in parallel and agrees on whether they are all equal,
// then fills the region, or computes every pixel, or has ONE thread launch the sub-regions as
// a child grid of (up to) k x k blocks, one per sub-region, from the device (dynamic
// parallelism; fire-and-forget: the parent never waits for it). A submission without a
// device-side launch earns no points at all.
//
//   mandelbrot_adaptive(dwells, width, height, view, params, stream)
//       writes every one of the width * height dwells (device memory) as defined above.
//       Enqueues its work on `stream` only (a host launch of one kernel, whose descendants the
//       stream waits for like any part of it) and returns without waiting.
//       1 <= width, height <= 16384; 1 <= initial_size <= 16384; 2 <= subdivisions <= 32;
//       1 <= max_depth <= 24 (the host's grid processes depth 0, a child grid depth 1, and so
//       on; 24 is the course's bound, the nesting depth CDP1 documents: the CDP2 guide lists
//       a pool of pending launches, not a depth, among its limits, and the H100 ran far
//       deeper chains, so the recursion must end at max_depth on its own; regions of 16384
//       pixels reach 1 pixel within 15 cuts, so a larger bound would change no image);
//       1 <= min_size; 1 <= max_dwell <= 1 << 20.
//
// A device-side launch that fails (a bad configuration, too many launches pending, the
// device out of memory) does not reach the host as an error: its regions are simply never
// written, so check cudaGetLastError() right after it, on the device. The device runtime
// keeps a fixed pool of launch slots (cudaLimitDevRuntimePendingLaunchCount, 2048 by
// default): a launch holds one until its grid has completed, and a parent region's grid
// completes only after its children, so a whole tree of launches can hold slots at once; a
// launch that finds the pool full fails. The tests and the benchmark raise the pool to
// kPendingLaunchLimit once, before the first call (above one launch per subdivided region of
// any case); the launcher need not change it. A larger pool is not free: the runtime reserves
// device memory for every slot up front.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

// Pixel (px, py) is the point c = (x0 + px * dx, y0 + py * dy) of the complex plane.
struct MandelbrotView {
  float x0 = 0.f;
  float y0 = 0.f;
  float dx = 0.f;
  float dy = 0.f;
};

struct MandelbrotParams {
  int initial_size = 64;  // side S of the initial regions, in pixels
  int subdivisions = 4;   // k: a subdivided region becomes up to k x k sub-regions
  int max_depth = 4;      // regions are at depths 0 .. max_depth - 1
  int min_size = 8;       // no subdivision into sub-regions smaller than this side
  int max_dwell = 256;    // iterations after which a point counts as inside the set
};

// What the tests and the benchmark set cudaLimitDevRuntimePendingLaunchCount to.
inline constexpr int kPendingLaunchLimit = 1 << 15;

// Escape time of pixel (px, py): z starts at 0 and iterates z = z^2 + c while |z|^2 <= 4, at
// most max_dwell times; the dwell is the number of iterations done (max_dwell: never escaped).
// Every multiply-add is one fmaf, so the host and the device round identically (nvcc would
// otherwise fuse a * b + c on the device only) and the tests compare exactly.
__host__ __device__ inline int pixel_dwell(int px, int py, const MandelbrotView& view,
                                           int max_dwell) {
  const float cx = fmaf(static_cast<float>(px), view.dx, view.x0);
  const float cy = fmaf(static_cast<float>(py), view.dy, view.y0);
  float zx = 0.f;
  float zy = 0.f;
  int dwell = 0;
  while (dwell < max_dwell && fmaf(zx, zx, zy * zy) <= 4.f) {
    const float next_zx = fmaf(zx, zx, fmaf(-zy, zy, cx));
    zy = fmaf(zx + zx, zy, cy);
    zx = next_zx;
    ++dwell;
  }
  return dwell;
}

void mandelbrot_adaptive(int* dwells, int width, int height, const MandelbrotView& view,
                         const MandelbrotParams& params, cudaStream_t stream);
