// RAII owners for device memory, pinned host memory, streams and events. Each releases its
// resource in its destructor, so an exception thrown by CUDA_CHECK never leaks GPU memory
// and no test needs a hand-written cleanup chain.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "course/check.h"

namespace course {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);  // never throw from a destructor
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() noexcept { return ptr_; }
  const T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void upload(const T* host, std::size_t count) {
    if (count > count_) throw std::out_of_range("DeviceBuffer::upload: more elements than fit");
    if (count > 0) CUDA_CHECK(cudaMemcpy(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  void fill_bytes(unsigned char value) {
    if (count_ > 0) CUDA_CHECK(cudaMemset(ptr_, value, bytes()));
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory: the DMA engines read it directly, so copies can run at full
// PCIe/NVLink speed and overlap with kernels.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count, unsigned int flags = cudaHostAllocDefault)
      : count_(count) {
    if (count_ > 0)
      CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&ptr_), count_ * sizeof(T), flags));
  }
  ~PinnedBuffer() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
  }
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  T* data() noexcept { return ptr_; }
  const T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }
  T& operator[](std::size_t i) noexcept { return ptr_[i]; }
  const T& operator[](std::size_t i) const noexcept { return ptr_[i]; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
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
