#include "aat_baseline.h"

#include "aat_kernels.h"
#include "course/check.h"

// The kernels are in aat_kernels.cu, compiled to PTX (aat_kernels.h says why).
using course_aat::kTile;

namespace {

dim3 grid_for(int m) { return dim3((m + kTile - 1) / kTile, (m + kTile - 1) / kTile); }

}  // namespace

void aat_naive(const float* a, float* c, int m, int k, cudaStream_t stream) {
  if (m <= 0) return;
  course_aat::naive_kernel<<<grid_for(m), dim3(kTile, kTile), 0, stream>>>(a, c, m, k);
  CUDA_CHECK_LAUNCH();
}

void aat_tiled_unpadded(const float* a, float* c, int m, int k, cudaStream_t stream) {
  if (m <= 0) return;
  course_aat::tiled_unpadded_kernel<<<grid_for(m), dim3(kTile, kTile), 0, stream>>>(a, c, m, k);
  CUDA_CHECK_LAUNCH();
}
