// The host side of atomic_scopes' system-scope count. Compiled by nvcc so that the host thread
// can use libcu++'s cuda::atomic_ref, the type the device side may use: two atomic_refs of
// different scopes must never refer to the same object at the same time.
#include "atomic_scopes_host.h"

#include <cuda/atomic>

#include <chrono>

#include "atomic_scopes.h"
#include "course/check.h"

namespace {

int device_attribute(cudaDeviceAttr attribute) {
  int device = 0;
  int value = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

}  // namespace

SharedCounter::SharedCounter() {
  if (device_attribute(cudaDevAttrConcurrentManagedAccess) != 0) {
    // The driver keeps CPU and GPU atomics on a managed page coherent (it moves the page to
    // whichever side touches it), so both may add at the same time.
    managed_ = course::ManagedBuffer<unsigned long long>(2);
    words_ = managed_.data();
    concurrent_ = true;
  } else {
    // Without concurrent managed access the host may not touch managed memory while any
    // kernel runs; mapped pinned memory it may, and its atomics are coherent with the
    // device's only over a link with native host atomics.
    mapped_ = course::PinnedBuffer<unsigned long long>(2, cudaHostAllocMapped);
    words_ = mapped_.data();
    concurrent_ = device_attribute(cudaDevAttrHostNativeAtomicSupported) != 0;
  }
  words_[0] = 0;
  words_[1] = 0;
}

std::string SharedCounter::describe() const {
  return std::string(managed_.size() > 0 ? "managed memory" : "mapped pinned memory") +
         (concurrent_ ? ", host and device adding at the same time"
                      : ", host adding only while no kernel runs (the device reports neither "
                        "concurrent managed access nor native host atomics)");
}

HostAdder::HostAdder(unsigned long long* target) : target_(target), thread_([this] { run(); }) {}

HostAdder::~HostAdder() {
  if (thread_.joinable()) stop();
}

void HostAdder::run() {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> word(*target_);
  unsigned long long adds = 0;
  while (!stopping_.load(std::memory_order_relaxed)) {
    // Relaxed, like the device's adds: only the final sum is checked, nothing is ordered by it.
    word.fetch_add(1ull, cuda::std::memory_order_relaxed);
    ++adds;
    // Published every 256 adds, so that the progress counter costs little next to the add.
    if (adds % 256 == 0) added_.store(adds, std::memory_order_relaxed);
  }
  added_.store(adds, std::memory_order_relaxed);
}

bool HostAdder::wait_until(unsigned long long adds) const {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (added_.load(std::memory_order_relaxed) < adds) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

unsigned long long HostAdder::stop() {
  stopping_.store(true, std::memory_order_relaxed);
  thread_.join();
  return added_.load(std::memory_order_relaxed);
}

std::vector<unsigned> scope_histogram_reference(const std::vector<unsigned>& values) {
  std::vector<unsigned> bins(kScopeBins, 0u);
  for (const unsigned value : values) ++bins[scope_bin(value)];
  return bins;
}
