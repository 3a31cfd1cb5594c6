// Course code for atomic_scopes (not the student's API): the host side of the system-scope
// count, shared by the tests and the benchmark. It lives here because the grader rejects
// student code that starts threads.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "course/buffers.h"

// Two 8-byte words that the host and the device can both address: word 0 is the counter that
// count_system_scope adds to, word 1 its neighbour on the same page (the benchmark's host
// thread adds there to share the page without touching the checked count). Managed memory
// where the device reports cudaDevAttrConcurrentManagedAccess, else mapped pinned memory.
class SharedCounter {
 public:
  SharedCounter();

  // Valid on the host and on the device (unified addressing).
  unsigned long long* counter() noexcept { return words_; }
  unsigned long long* neighbour() noexcept { return words_ + 1; }
  // True where a host thread may update these words with atomics while a kernel does too:
  // managed memory with concurrent managed access, or host memory over a link with native
  // host atomics (cudaDevAttrHostNativeAtomicSupported).
  bool host_may_add_during_kernels() const noexcept { return concurrent_; }
  // "managed memory" or "mapped pinned memory", and whether the host may add concurrently.
  std::string describe() const;

 private:
  // One of the two holds the words; the course's buffers free them.
  course::ManagedBuffer<unsigned long long> managed_;
  course::PinnedBuffer<unsigned long long> mapped_;
  unsigned long long* words_ = nullptr;
  bool concurrent_ = false;
};

// A host thread that adds 1 to *target again and again with a system-scope atomic
// (cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>, the same type a kernel may
// use), from construction until stop(). Started before a launch and stopped after the stream
// is synchronised, it is adding for the whole time the kernel runs.
class HostAdder {
 public:
  explicit HostAdder(unsigned long long* target);
  ~HostAdder();  // stops the thread if stop() was not called
  HostAdder(const HostAdder&) = delete;
  HostAdder& operator=(const HostAdder&) = delete;

  // Returns once the thread has added at least `adds` times, so it is busy when the launch
  // comes; false if that took over 10 s (the thread could not run).
  bool wait_until(unsigned long long adds) const;
  // Stops the thread and returns how many times it added.
  unsigned long long stop();

 private:
  void run();

  unsigned long long* target_;
  std::atomic<bool> stopping_{false};
  std::atomic<unsigned long long> added_{0};
  std::thread thread_;
};

// bins[b] = the number of values whose low eight bits are b (scope_bin), on the CPU.
std::vector<unsigned> scope_histogram_reference(const std::vector<unsigned>& values);
