// Device-side fills computed from the element's index, for inputs a benchmark generates on the
// GPU. course::fill_hashed (device_random.h) covers plain seeded values; a workload with its own
// distribution (skewed histogram bins, structs) passes a functor built on course::hash_index.
// Include from .cu files only: it defines a kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "course/check.h"
#include "course/device.h"

namespace course {

namespace detail {

template <class T, class Value>
__global__ void fill_by_index_kernel(T* __restrict__ data, std::size_t n, Value value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = value(i);
}

}  // namespace detail

// data[i] = value(i) for i in [0, n), enqueued on `stream`; n = 0 does nothing. `value` is a
// functor with a __device__ operator()(std::size_t) returning T, copied to the kernel.
template <class T, class Value>
void fill_by_index(T* data, std::size_t n, cudaStream_t stream, Value value) {
  if (n == 0) return;
  // Grid-stride: enough blocks to fill every SM, whatever n is.
  detail::fill_by_index_kernel<<<sm_count() * 8, 256, 0, stream>>>(data, n, value);
  CUDA_CHECK_LAUNCH();
}

}  // namespace course
