// RAII owners for device, pinned host and managed memory, streams and events. Each releases its
// resource in its destructor, so an exception thrown by CUDA_CHECK never leaks GPU memory
// and no test needs a hand-written cleanup chain.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

#include "course/check.h"

namespace course {

namespace detail {

// Ownership shared by the buffers below: `count` elements at `ptr`, released with Free, moved
// but never copied.
template <class T, cudaError_t (*Free)(void*)>
class OwnedArray {
 public:
  ~OwnedArray() {
    if (ptr_ != nullptr) Free(ptr_);  // never throw from a destructor
  }
  OwnedArray(OwnedArray&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  OwnedArray& operator=(OwnedArray&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
    return *this;
  }
  OwnedArray(const OwnedArray&) = delete;
  OwnedArray& operator=(const OwnedArray&) = delete;

  T* data() noexcept { return ptr_; }
  const T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 protected:
  OwnedArray() = default;
  explicit OwnedArray(std::size_t count) : count_(count) {}
  void** slot() noexcept { return reinterpret_cast<void**>(&ptr_); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace detail

template <class T>
class DeviceBuffer : public detail::OwnedArray<T, cudaFree> {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : detail::OwnedArray<T, cudaFree>(count) {
    if (count > 0) CUDA_CHECK(cudaMalloc(this->slot(), this->bytes()));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }

  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void upload(const T* host, std::size_t count) {
    if (count > this->size())
      throw std::out_of_range("DeviceBuffer::upload: more elements than fit");
    if (count > 0) {
      CUDA_CHECK(cudaMemcpy(this->data(), host, count * sizeof(T), cudaMemcpyHostToDevice));
      // From pageable memory cudaMemcpy may return before the data has landed, and the
      // default stream it went on orders nothing on a non-blocking stream: a kernel there could
      // read the old contents. Seen on an H200 with other programs sharing the GPU.
      CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
  }
  std::vector<T> download() const {
    std::vector<T> host;
    download_into(host);
    return host;
  }
  // The same copy into `host`, resized to fit: a benchmark that checks one output several
  // times reuses one host array (a fresh 256 MiB one costs more than the copy into it).
  void download_into(std::vector<T>& host) const {
    host.resize(this->size());
    if (!host.empty())
      CUDA_CHECK(cudaMemcpy(host.data(), this->data(), this->bytes(), cudaMemcpyDeviceToHost));
  }
  void fill_bytes(unsigned char value) {
    if (this->size() > 0) {
      CUDA_CHECK(cudaMemset(this->data(), value, this->bytes()));
      // cudaMemset is asynchronous: without the wait, a poison fill could land after a kernel
      // on a non-blocking stream had written its output.
      CUDA_CHECK(cudaStreamSynchronize(nullptr));
    }
  }
};

// Page-locked host memory: the DMA engines read it directly, so copies can run at full
// PCIe/NVLink speed and overlap with kernels.
template <class T>
class PinnedBuffer : public detail::OwnedArray<T, cudaFreeHost> {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count, unsigned int flags = cudaHostAllocDefault)
      : detail::OwnedArray<T, cudaFreeHost>(count) {
    if (count > 0) CUDA_CHECK(cudaHostAlloc(this->slot(), this->bytes(), flags));
  }
};

// Unified memory (cudaMallocManaged): one pointer valid on the host and the device; pages
// migrate on demand or when prefetched. The host may read and write it between kernels.
template <class T>
class ManagedBuffer : public detail::OwnedArray<T, cudaFree> {
 public:
  ManagedBuffer() = default;
  explicit ManagedBuffer(std::size_t count, unsigned int flags = cudaMemAttachGlobal)
      : detail::OwnedArray<T, cudaFree>(count) {
    if (count > 0) CUDA_CHECK(cudaMallocManaged(this->slot(), this->bytes(), flags));
  }
};

class Stream {
 public:
  explicit Stream(unsigned int flags = cudaStreamNonBlocking) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, flags));
  }
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }
  operator cudaStream_t() const noexcept { return stream_; }
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  explicit Event(unsigned int flags = cudaEventDefault) {
    CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
  }
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const noexcept { return event_; }
  operator cudaEvent_t() const noexcept { return event_; }
  void record(cudaStream_t stream = nullptr) { CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() const { CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

// Times the work enqueued on one stream between start() and stop(), like CUTLASS's GpuTimer.
class GpuTimer {
 public:
  explicit GpuTimer(cudaStream_t stream = nullptr) : stream_(stream) {}
  void start() { start_.record(stream_); }
  void stop() { stop_.record(stream_); }
  float elapsed_ms() {
    stop_.synchronize();
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaStream_t stream_;
  Event start_;
  Event stop_;
};

}  // namespace course
