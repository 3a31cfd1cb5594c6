#include "register_spilling_baseline.h"

#include <cstddef>

#include "course/check.h"
#include "register_spilling.h"

namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
// Eight resident blocks of 256 threads, the whole of an H100 SM's 2048 threads: ptxas may then
// give a thread only 65536 / 2048 = 32 registers, two fewer than this kernel wants, so besides
// the array it spills a few values too.
constexpr int kMinBlocks = 8;

__device__ int clamp_index(int i, int last) { return i < 0 ? 0 : (i > last ? last : i); }

// blockIdx.x numbers the 32 x 8 tiles row by row: a one-dimensional grid has room for 2^31 - 1
// blocks, where gridDim.y would stop at 65535 tiles (524,280 rows).
__global__ void __launch_bounds__(kBlockX * kBlockY, kMinBlocks)
    local_array_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols,
                       int tiles_across) {
  const int tile_row = static_cast<int>(blockIdx.x) / tiles_across;
  const int tile_col = static_cast<int>(blockIdx.x) - tile_row * tiles_across;
  const int r = tile_row * kBlockY + static_cast<int>(threadIdx.y);
  const int c = tile_col * kBlockX + static_cast<int>(threadIdx.x);
  if (r >= rows || c >= cols) return;

  float window[kMedianWindow];
  for (int dr = 0; dr < kMedianWidth; ++dr) {
    const int y = clamp_index(r + dr - kMedianRadius, rows - 1);
    const float* row = in + static_cast<std::size_t>(y) * cols;
    for (int dc = 0; dc < kMedianWidth; ++dc)
      window[dr * kMedianWidth + dc] = row[clamp_index(c + dc - kMedianRadius, cols - 1)];
  }
  // Insertion sort: where the loop stops depends on the data, so window[j] is a run-time index.
  for (int i = 1; i < kMedianWindow; ++i) {
    const float x = window[i];
    int j = i - 1;
    while (j >= 0 && window[j] > x) {
      window[j + 1] = window[j];
      --j;
    }
    window[j + 1] = x;
  }
  out[static_cast<std::size_t>(r) * cols + c] = window[kMedianWindow / 2];
}

}  // namespace

void register_spilling_local_array(const float* in, float* out, int rows, int cols,
                                   cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  // Rounded up without forming cols + 31, which overflows for cols near 2^31.
  const int tiles_across = (cols - 1) / kBlockX + 1;
  const int tiles_down = (rows - 1) / kBlockY + 1;
  local_array_kernel<<<tiles_across * tiles_down, dim3(kBlockX, kBlockY), 0, stream>>>(
      in, out, rows, cols, tiles_across);
  CUDA_CHECK_LAUNCH();
}
