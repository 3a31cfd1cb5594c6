#include "zero_copy_unified_common.h"

#include "course/check.h"

std::vector<float> saxpy_reference(const float* in, std::size_t n, float factor, float offset) {
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = in[i] * factor + offset;
  return out;
}

void prefetch_to_host(const void* pointer, std::size_t bytes, cudaStream_t stream) {
  cudaMemLocation host{};
  host.type = cudaMemLocationTypeHost;
  host.id = 0;
  CUDA_CHECK(cudaMemPrefetchAsync(pointer, bytes, host, 0, stream));
}
