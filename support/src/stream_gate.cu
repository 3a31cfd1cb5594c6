#include "course/stream_gate.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "course/check.h"

namespace course {

namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until the host sets flags[0] or timeout_ns pass; then records in flags[1] which it was.
__global__ void gate_kernel(volatile int* flags, unsigned long long timeout_ns) {
  const unsigned long long start = global_ns();
  while (flags[0] == 0) {
    if (global_ns() - start > timeout_ns) {
      flags[1] = 1;
      break;
    }
    __nanosleep(2000);
  }
  __threadfence_system();
}

__device__ int other_byte_found;

// Sets *found when any of the bytes differs from value.
__global__ void find_other_byte(const unsigned char* bytes, std::size_t n, unsigned char value,
                                int* found) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (bytes[i] != value) {
      *found = 1;
      return;
    }
  }
}

}  // namespace

StreamGate::StreamGate(cudaStream_t stream, double timeout_s) : stream_(stream) {
  CUDA_CHECK(cudaHostAlloc(&host_flags_, 2 * sizeof(int), cudaHostAllocMapped));
  host_flags_[0] = 0;
  host_flags_[1] = 0;
  CUDA_CHECK(cudaHostGetDevicePointer(&device_flags_, host_flags_, 0));
  CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  gate_kernel<<<1, 1, 0, stream_>>>(device_flags_,
                                    static_cast<unsigned long long>(timeout_s * 1e9));
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(done_, stream_));
}

StreamGate::~StreamGate() {
  if (!opened_) open();
  if (done_ != nullptr) {
    cudaEventSynchronize(done_);
    cudaEventDestroy(done_);
  }
  if (host_flags_ != nullptr) cudaFreeHost(host_flags_);
}

void StreamGate::open() {
  opened_ = true;
  reinterpret_cast<volatile int*>(host_flags_)[0] = 1;
}

bool StreamGate::gave_up() {
  if (!opened_) open();
  CUDA_CHECK(cudaEventSynchronize(done_));
  return reinterpret_cast<volatile int*>(host_flags_)[1] != 0;
}

bool drain_other_streams(double timeout_s) {
  cudaEvent_t marker = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&marker, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventRecord(marker, cudaStreamLegacy));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  cudaError_t status;
  while ((status = cudaEventQuery(marker)) == cudaErrorNotReady &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  cudaEventDestroy(marker);
  if (status != cudaSuccess && status != cudaErrorNotReady) CUDA_CHECK(status);
  return status == cudaSuccess;
}

void snapshot(const std::vector<Piece>& pieces, unsigned char* host) {
  if (pieces.empty()) return;
  cudaStream_t side = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaError_t copied = cudaSuccess;
  for (const Piece& piece : pieces) {
    if (piece.bytes == 0) continue;
    copied = cudaMemcpyAsync(host, piece.data, piece.bytes, cudaMemcpyDefault, side);
    if (copied != cudaSuccess) break;
    host += piece.bytes;
  }
  const cudaError_t synced = cudaStreamSynchronize(side);
  cudaStreamDestroy(side);
  CUDA_CHECK(copied);
  CUDA_CHECK(synced);
}

std::vector<unsigned char> snapshot(const void* device, std::size_t bytes) {
  std::vector<unsigned char> host(bytes);
  if (bytes > 0) snapshot({{device, bytes}}, host.data());
  return host;
}

HeldCall call_held(cudaStream_t stream, const std::function<void(cudaStream_t)>& launch,
                   const std::function<bool()>& changed, double window_ms) {
  constexpr auto kPollInterval = std::chrono::milliseconds(2);
  HeldCall held;
  StreamGate gate(stream);
  launch(stream);
  drain_other_streams(1.0);
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double, std::milli>(window_ms));
  while (!(held.changed = changed())) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(kPollInterval, deadline - now));
  }
  gate.open();
  held.gave_up = gate.gave_up();
  return held;
}

bool holds_only(const void* device, std::size_t bytes, unsigned char value) {
  if (bytes == 0) return true;
  // Nothing here may wait for the device (cudaFree, cudaFreeHost and pinned allocations can):
  // a held stream would hold this call too. The flag is a module variable, one caller at a time.
  static std::mutex one_at_a_time;
  const std::lock_guard<std::mutex> hold(one_at_a_time);
  int* flag = nullptr;
  cudaError_t status = cudaGetSymbolAddress(reinterpret_cast<void**>(&flag), other_byte_found);
  if (status != cudaSuccess) CUDA_CHECK(status);
  cudaStream_t side = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  int found = 0;
  status = cudaMemsetAsync(flag, 0, sizeof(int), side);
  if (status == cudaSuccess) {
    // A few blocks: the scan takes microseconds and leaves the SMs to the work it watches.
    find_other_byte<<<64, 256, 0, side>>>(static_cast<const unsigned char*>(device), bytes, value,
                                          flag);
    status = cudaGetLastError();
  }
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(&found, flag, sizeof found, cudaMemcpyDeviceToHost, side);
  if (status == cudaSuccess) status = cudaStreamSynchronize(side);
  cudaStreamDestroy(side);
  CUDA_CHECK(status);
  return found == 0;
}

}  // namespace course
