// CPU reference for adaptive_mandelbrot (course code, for the tests and the benchmark): the
// algorithm of adaptive_mandelbrot.h, recursively, one region at a time.
#pragma once

#include <vector>

#include "adaptive_mandelbrot.h"

// The image mandelbrot_adaptive must write (width * height dwells, row-major), computing
// pixel_dwell only where the algorithm looks.
std::vector<int> mandelbrot_reference(int width, int height, const MandelbrotView& view,
                                      const MandelbrotParams& params);

// The same image from every pixel's dwell, already known (`pixel_dwells`: pixel_dwell of each
// pixel, row-major, such as the flat baseline's output): the algorithm then only reads and
// copies, so a picture far too large for mandelbrot_reference is checked in milliseconds.
// params.max_dwell is not used.
std::vector<int> mandelbrot_reference_from_pixels(const std::vector<int>& pixel_dwells,
                                                  int width, int height,
                                                  const MandelbrotParams& params);

// pixel_dwell of every pixel (what one thread per pixel computes): the tests look for views
// where the algorithm's image differs from it.
std::vector<int> mandelbrot_flat_reference(int width, int height, const MandelbrotView& view,
                                           int max_dwell);
