// Exercise ch03 / pitched_2d: 2D arrays whose rows are padded to an aligned pitch.
//
// Frozen API.
//
//   Pitched                a width x height array of floats on the device; row r starts at
//                          (char*)ptr + r * pitch_bytes, and pitch_bytes >= width * 4.
//   pitched_alloc(w, h)    allocates with cudaMallocPitch (w, h >= 1).
//   pitched_free(p)        releases it (cudaFree).
//   pitched_upload(dst, host, stream)
//                          host holds dst.height rows of dst.width floats, tightly packed;
//                          copies them into the pitched rows with cudaMemcpy2DAsync.
//   pitched_download(host, src, stream)
//                          the reverse. Both are enqueued on `stream` (host memory may be
//                          pageable, in which case the copy may finish before returning).
//   mirror_sum(in, out, stream)
//                          out(r, c) = in(r, w - 1 - c) + in(h - 1 - r, c) for every r < h,
//                          c < w, where in(r, c) is the float at column c of row r. in and
//                          out have the same width and height. The padding bytes at the end
//                          of each row of out must not be written.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

struct Pitched {
  float* ptr = nullptr;
  std::size_t pitch_bytes = 0;
  int width = 0;
  int height = 0;
};

Pitched pitched_alloc(int width, int height);
void pitched_free(Pitched p);
void pitched_upload(Pitched dst, const float* host, cudaStream_t stream);
void pitched_download(float* host, Pitched src, cudaStream_t stream);
void mirror_sum(Pitched in, Pitched out, cudaStream_t stream);
