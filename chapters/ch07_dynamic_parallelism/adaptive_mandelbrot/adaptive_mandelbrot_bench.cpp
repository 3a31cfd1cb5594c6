// The whole Mandelbrot set on 4096 x 4096 pixels at 4096 iterations, computed by the course's
// flat kernel (one thread per pixel) and by the student's adaptive subdivision, in the same
// run. Both rates count the image's pixels, so their ratio is the adaptive image's speedup.
//
// Why this picture: at 4096 iterations a pixel inside the set costs 4096 iterations and one
// outside it a handful, so the flat kernel's time is the set's area (a sixth of the view) times
// 4096. The set's inside is made of large even regions (the main cardioid, the big bulbs)
// whose border alone, computed once, fills them; the adaptive image pays full price only in the
// regions along the boundary. Parameters as in NVIDIA's Mariani-Silver example, scaled to the
// picture: initial regions of 256 pixels (256 blocks), 4 x 4 sub-regions, 3 levels (256, 64,
// 16 pixels), no sub-region under 16 pixels.
//
// Thresholds (the manifest's), from the first H100 run (2026-11-23): flat 4.591 ms, the
// solution 1.973 ms, a speedup of 2.33. A CPU model of the two kernels on this picture
// (counting for every warp the iterations of its slowest thread) gives 4.8x fewer
// warp-iterations; the GPU loses the rest to what the model leaves out: about 1,600 device
// launches (174 child grids at depth 1, 1,438 at depth 2), each level starting only once its
// parent block has computed a border that may take 4096 iterations, and blocks of 16 x 16
// pixels whose 60-pixel ring keeps two of their eight warps busy. NVIDIA reports 1.3x to 6x
// for this method. full_at = 1.8 leaves the solution room for run-to-run noise; zero_at = 1.1:
// a subdivision that gains nothing over one thread per pixel (every pixel computed after all,
// or one launch per sub-region starving the GPU) earns nothing. Both kernels are bound by
// arithmetic, not memory, so an H200 should give about the same ratio (H200 to be confirmed).
//
// Checks: every call against the first call of its view (TimedIo), the view alternating
// between the whole set and the set shifted by a few pixels, so a remembered image is caught.
// The flat image of the last call is checked against pixel_dwell on the CPU at a sample of
// pixels; the adaptive image is then checked in full against the algorithm run on the CPU
// over the flat image's dwells (mandelbrot_reference_from_pixels: no iteration on the CPU).
#include "adaptive_mandelbrot.h"

#include <cstddef>
#include <random>
#include <vector>

#include "adaptive_mandelbrot_baseline.h"
#include "adaptive_mandelbrot_reference.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  // Room for one child grid per subdivided region, as the header promises (1,612 here).
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, kPendingLaunchLimit));

  const int width = 4096, height = 4096;
  const std::size_t pixels = static_cast<std::size_t>(width) * height;
  MandelbrotParams params;
  params.initial_size = 256;
  params.subdivisions = 4;
  params.max_depth = 3;
  params.min_size = 16;
  params.max_dwell = 4096;

  // x in [-2.25, 0.75], y in [-1.5, 1.5]; the other version a few pixels off.
  MandelbrotView whole;
  whole.dx = whole.dy = 3.0f / width;
  whole.x0 = -2.25f;
  whole.y0 = -1.5f;
  MandelbrotView shifted = whole;
  shifted.x0 += 3 * whole.dx;
  shifted.y0 -= 5 * whole.dy;
  const MandelbrotView* view = &whole;
  const auto view_of_call = [&](cudaStream_t, int call) {
    view = call % 2 == 0 ? &whole : &shifted;
  };

  course::DeviceBuffer<int> flat(pixels), adaptive(pixels);

  bench.time(
      "flat_per_pixel", static_cast<double>(pixels), course::Unit::Gelems,
      [&](cudaStream_t s) {
        mandelbrot_flat(flat.data(), width, height, *view, params.max_dwell, s);
      },
      course::TimedIo{{course::exact_output(flat, "flat dwells")}, view_of_call});
  const std::vector<int> flat_image = flat.download();

  // The course's kernel, checked where the CPU can afford it (a few million iterations).
  auto rng = course::make_rng("adaptive_mandelbrot_bench");
  std::uniform_int_distribution<int> any_x(0, width - 1), any_y(0, height - 1);
  std::vector<int> sampled_expected, sampled_actual;
  for (int sample = 0; sample < 1024; ++sample) {
    const int px = any_x(rng), py = any_y(rng);
    sampled_expected.push_back(pixel_dwell(px, py, whole, params.max_dwell));
    sampled_actual.push_back(flat_image[static_cast<std::size_t>(py) * width + px]);
  }
  bench.check("flat_per_pixel",
              course::compare_exact(sampled_expected, sampled_actual,
                                    {{}, "flat dwells at 1024 sampled pixels"}));

  bench.time(
      "adaptive", static_cast<double>(pixels), course::Unit::Gelems,
      [&](cudaStream_t s) {
        mandelbrot_adaptive(adaptive.data(), width, height, *view, params, s);
      },
      course::TimedIo{{course::exact_output(adaptive, "adaptive dwells")}, view_of_call});
  bench.check("adaptive", course::compare_exact(
                              mandelbrot_reference_from_pixels(flat_image, width, height, params),
                              adaptive.download(),
                              {{static_cast<std::size_t>(height), static_cast<std::size_t>(width)},
                               "adaptive dwells (unwritten pixels: a child launch failed)"}));
}
