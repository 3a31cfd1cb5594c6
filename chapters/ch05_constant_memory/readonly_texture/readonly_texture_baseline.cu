#include "readonly_texture_baseline.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"
#include "course/device_fill.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;

// No __restrict__ and no __ldg: the loads are plain LDG, which is what the student's read-only
// loads are measured against. Otherwise the same grid-stride loop as the course solution.
__global__ void gather_plain_kernel(const float* src, const int* indices, float* out, int n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < static_cast<std::size_t>(n); i += stride)
    out[i] = src[indices[i]];
}

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kMaxGridY = 65535;

// One dimension of the filter for output coordinate `o` of `out_size` over `size` texels: the
// two texels it blends, already clamped or wrapped, and the weight of the second.
struct Taps {
  int first;
  int second;
  float weight;
};

__device__ int wrap_or_clamp(int i, int size, bool wrap) {
  if (wrap) return i < 0 ? i + size : (i >= size ? i - size : i);  // i is in [-1, size]
  return min(max(i, 0), size - 1);
}

__device__ Taps axis_taps(int o, int out_size, int size, bool wrap) {
  const float normalised = (static_cast<float>(o) + 0.5f) / static_cast<float>(out_size);
  const float shifted = normalised * static_cast<float>(size) - 0.5f;
  const float below = floorf(shifted);
  const int i = static_cast<int>(below);
  return {wrap_or_clamp(i, size, wrap), wrap_or_clamp(i + 1, size, wrap), shifted - below};
}

__global__ void resample_manual_kernel(const float* __restrict__ image, int width, int height,
                                       float* __restrict__ out, int out_width, int out_height,
                                       bool wrap) {
  for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < out_height;
       y += blockDim.y * gridDim.y) {
    const Taps rows = axis_taps(y, out_height, height, wrap);
    const float* top = image + static_cast<std::size_t>(rows.first) * width;
    const float* bottom = image + static_cast<std::size_t>(rows.second) * width;
    for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < out_width;
         x += blockDim.x * gridDim.x) {
      const Taps c = axis_taps(x, out_width, width, wrap);
      const float upper = (1.0f - c.weight) * top[c.first] + c.weight * top[c.second];
      const float lower = (1.0f - c.weight) * bottom[c.first] + c.weight * bottom[c.second];
      out[static_cast<std::size_t>(y) * out_width + x] =
          (1.0f - rows.weight) * upper + rows.weight * lower;
    }
  }
}

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
  gather_plain_kernel<<<blocks, kThreads, 0, stream>>>(src, indices, out, n);
  CUDA_CHECK_LAUNCH();
}

void readonly_texture_resample_manual(const float* image, int width, int height, float* out,
                                      int out_width, int out_height, ResampleAddress address,
                                      cudaStream_t stream) {
  if (out_width <= 0 || out_height <= 0) return;
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((out_width + kBlockX - 1) / kBlockX,
                  std::min((out_height + kBlockY - 1) / kBlockY, kMaxGridY));
  resample_manual_kernel<<<grid, block, 0, stream>>>(image, width, height, out, out_width,
                                                     out_height,
                                                     address == ResampleAddress::kWrap);
  CUDA_CHECK_LAUNCH();
}

void readonly_texture_fill_window_indices(int* indices, int n, int window, std::uint64_t seed,
                                          cudaStream_t stream) {
  if (n <= 0) return;
  course::fill_by_index(indices, static_cast<std::size_t>(n), stream,
                        WindowIndex{n, window, seed});
}
