// Course helpers shared by the tests and the benchmark of zero_copy_unified.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "course/check.h"

// cudaMallocManaged memory with RAII; the host may read and write it between kernels.
template <class T>
class ManagedBuffer {
 public:
  explicit ManagedBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) CUDA_CHECK(cudaMallocManaged(reinterpret_cast<void**>(&ptr_), bytes()));
  }
  ~ManagedBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  ManagedBuffer(const ManagedBuffer&) = delete;
  ManagedBuffer& operator=(const ManagedBuffer&) = delete;
  T* data() noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// The reference, with the multiply and add rounded separately the way the test expects a
// kernel to compute them (nvcc would fuse them; the tolerance allows either).
std::vector<float> saxpy_reference(const float* in, std::size_t n, float factor, float offset);

// Moves a managed range back to host memory, stream-ordered (CUDA 13 signature), so that the
// next kernel has to fetch it again.
void prefetch_to_host(const void* pointer, std::size_t bytes, cudaStream_t stream);
