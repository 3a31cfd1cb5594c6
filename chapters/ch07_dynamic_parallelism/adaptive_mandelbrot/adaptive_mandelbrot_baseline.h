// Course-owned code the adaptive_mandelbrot benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

#include "adaptive_mandelbrot.h"

// The flat escape-time image: one thread per pixel, each computing pixel_dwell, whatever the
// pixels around it do. dwells[py * width + px] = pixel_dwell(px, py, view, max_dwell). On
// `stream`; returns without waiting.
void mandelbrot_flat(int* dwells, int width, int height, const MandelbrotView& view,
                     int max_dwell, cudaStream_t stream);
