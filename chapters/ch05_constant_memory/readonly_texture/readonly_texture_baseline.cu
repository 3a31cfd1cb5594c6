#include "readonly_texture_baseline.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"
#include "course/device_fill.cuh"
#include "readonly_texture_kernels.h"

// The kernels are in readonly_texture_kernels.cu, compiled to PTX (readonly_texture_kernels.h
// says why).
namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;
constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kMaxGridY = 65535;

struct WindowIndex {
  int n;
  int window;
  std::uint64_t seed;
  __device__ int operator()(std::size_t k) const {
    return readonly_texture_window_index(k, n, window, seed);
  }
};

}  // namespace

void readonly_texture_gather_plain(const float* src, const int* indices, float* out, int n,
                                   cudaStream_t stream) {
  if (n <= 0) return;
  const int blocks = std::min(n / kThreads + 1, course::sm_count() * kBlocksPerSm);
  course_readonly_texture::gather_plain_kernel<<<blocks, kThreads, 0, stream>>>(src, indices,
                                                                                out, n);
  CUDA_CHECK_LAUNCH();
}

void readonly_texture_resample_manual(const float* image, int width, int height, float* out,
                                      int out_width, int out_height, ResampleAddress address,
                                      cudaStream_t stream) {
  if (out_width <= 0 || out_height <= 0) return;
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((out_width + kBlockX - 1) / kBlockX,
                  std::min((out_height + kBlockY - 1) / kBlockY, kMaxGridY));
  course_readonly_texture::resample_manual_kernel<<<grid, block, 0, stream>>>(
      image, width, height, out, out_width, out_height, address == ResampleAddress::kWrap);
  CUDA_CHECK_LAUNCH();
}

void readonly_texture_fill_window_indices(int* indices, int n, int window, std::uint64_t seed,
                                          cudaStream_t stream) {
  if (n <= 0) return;
  course::fill_by_index(indices, static_cast<std::size_t>(n), stream,
                        WindowIndex{n, window, seed});
}
