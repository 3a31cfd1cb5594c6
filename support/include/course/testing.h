// GoogleTest glue: comparisons as assertion results, per-case generators, poisoned and guarded
// outputs, input guards, the sizes tests sweep and their names. The helpers a benchmark needs
// too (poison values, host sums, ownership of an exercise's allocations, event times) are in
// course/testing_common.h, included here.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "course/buffers.h"
#include "course/compare.h"
#include "course/random.h"
#include "course/stream_gate.h"
#include "course/testing_common.h"

namespace course::testing {

// A generator seeded from the run seed and the running test's full name.
std::mt19937_64 case_rng();

inline ::testing::AssertionResult as_assertion(const Comparison& comparison) {
  if (comparison.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << comparison.summary();
}

template <class T>
::testing::AssertionResult equal(const std::vector<T>& expected, const std::vector<T>& actual,
                                 const CompareOptions& options = {}) {
  return as_assertion(compare_exact(expected, actual, options));
}

template <class T>
::testing::AssertionResult close(const std::vector<T>& expected, const std::vector<T>& actual,
                                 Tolerance tolerance, const CompareOptions& options = {}) {
  return as_assertion(compare_close(expected, actual, tolerance, options));
}

// cudaMemset, and cudaMemcpy from pageable host memory, may return before the device has done
// them, on the legacy default stream, which orders nothing on a non-blocking stream. A test
// waits for such set-up before the call under test; otherwise, with other programs sharing the
// GPU, the call can read stale input or have its output poisoned after writing it.
void wait_for_setup();

// cudaMemset of `bytes` bytes at `device`, then wait_for_setup().
void fill_device_bytes(void* device, int value, std::size_t bytes);

// An output buffer already poisoned, so elements the kernel never writes are caught.
template <class T>
DeviceBuffer<T> poisoned_output(std::size_t count) {
  DeviceBuffer<T> buffer(count);
  buffer.fill_bytes(kPoisonByte);
  return buffer;
}

// Takes ownership of what an exercise's allocating function returned (an Owned<T, Free> from
// course/testing_common.h); a test failure, "<call> returned nullptr", when it returned nullptr
// and `may_be_null` is false (alloc_pinned(0) may, alloc_pinned(12) may not).
template <class Owner>
Owner owned_result(typename Owner::pointer pointer, bool may_be_null, const std::string& call) {
  if (!may_be_null && pointer == nullptr) ADD_FAILURE() << call << " returned nullptr";
  return Owner(pointer);
}

// The check behind GuardedOutput::guards_intact, on host copies of the two guard zones:
// `before` elements in front of `name`'s `count` elements, `after` behind them, each
// `size` bytes.
::testing::AssertionResult check_guards(const unsigned char* front, std::size_t before,
                                        const unsigned char* back, std::size_t after,
                                        std::size_t size, std::size_t count,
                                        const std::string& name);

// An output of `count` elements between two poisoned guard zones, all of it poisoned: data()
// points past the front guard, so a kernel that writes before element 0 or past element
// count - 1 changes a guard, and guards_intact() says which one and at which offset. A front
// guard of kGuard + k elements leaves data() k elements past an aligned address, for tests
// of misaligned pointers.
template <class T>
class GuardedOutput {
 public:
  static constexpr std::size_t kGuard = 64;  // elements: 256 bytes of float, past any vector

  explicit GuardedOutput(std::size_t count, std::size_t guard_before = kGuard,
                         std::size_t guard_after = kGuard)
      : count_(count), before_(guard_before), after_(guard_after),
        storage_(guard_before + count + guard_after) {
    storage_.fill_bytes(kPoisonByte);
  }

  T* data() noexcept { return storage_.data() + before_; }
  const T* data() const noexcept { return storage_.data() + before_; }
  std::size_t size() const noexcept { return count_; }

  // Poisons the count elements again (not the guards, which keep what earlier calls did to
  // them) and waits for it: what a test does before calling again on the same output.
  void repoison() {
    fill_device_bytes(data(), kPoisonByte, count_ * sizeof(T));
  }

  // The count elements between the guards.
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0)
      CUDA_CHECK(cudaMemcpy(host.data(), data(), count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

  // Success when every guard byte still holds the poison; otherwise names the zone written
  // (before or after `name`) and the offsets of the changed elements.
  ::testing::AssertionResult guards_intact(const std::string& name = "output") const {
    std::vector<unsigned char> front(before_ * sizeof(T)), back(after_ * sizeof(T));
    if (!front.empty())
      CUDA_CHECK(cudaMemcpy(front.data(), storage_.data(), front.size(), cudaMemcpyDeviceToHost));
    if (!back.empty())
      CUDA_CHECK(cudaMemcpy(back.data(), data() + count_, back.size(), cudaMemcpyDeviceToHost));
    return check_guards(front.data(), before_, back.data(), after_, sizeof(T), count_, name);
  }

 private:
  std::size_t count_;
  std::size_t before_;
  std::size_t after_;
  DeviceBuffer<T> storage_;
};

// The "empty call" check: after calls that had nothing to do (n = 0, an empty matrix), waits
// for the device, then succeeds when all of `out` still holds the poison and its guards are
// intact. Otherwise says which elements were written and which guard changed, as `what`
// ("c after a call with n = 0"). The test then calls again with a small size on the same
// buffers, so that doing nothing at all does not pass.
template <class T>
::testing::AssertionResult wrote_nothing(const GuardedOutput<T>& out, const std::string& what) {
  CUDA_CHECK(cudaDeviceSynchronize());
  CompareOptions options;
  options.what = what;
  const Comparison contents = compare_exact(poison_values<T>(out.size()), out.download(), options);
  const ::testing::AssertionResult guards = out.guards_intact(what);
  if (contents.ok && guards) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure();
  if (!contents.ok) failure << contents.summary();
  if (!contents.ok && !guards) failure << "\n";
  if (!guards) failure << guards.message();
  return failure;
}

// Success when all[from, end) still holds the poison: the memory past what a call may write
// (a guard zone downloaded with the output). `what` names it, "memory after out[10) (must not
// be written)".
template <class T>
::testing::AssertionResult poison_after(const std::vector<T>& all, std::size_t from,
                                        const std::string& what) {
  const auto first = all.begin() + static_cast<std::ptrdiff_t>(std::min(from, all.size()));
  CompareOptions options;
  options.what = what;
  return as_assertion(
      compare_exact(poison_values<T>(static_cast<std::size_t>(all.end() - first)),
                    std::vector<T>(first, all.end()), options));
}

// Success when `host` is page-locked memory the CUDA runtime knows (cudaPointerGetAttributes
// says cudaMemoryTypeHost); otherwise says it is pageable. A test streams its advice after it.
::testing::AssertionResult page_locked(const void* host);

// A device copy of an input that remembers its pristine contents, so a test can check the
// student's code did not write into it.
template <class T>
class GuardedInput {
 public:
  explicit GuardedInput(std::vector<T> host) : host_(std::move(host)), device_(host_) {}
  const T* data() const noexcept { return device_.data(); }
  const std::vector<T>& host() const noexcept { return host_; }
  std::size_t size() const noexcept { return host_.size(); }
  ::testing::AssertionResult unchanged(const std::string& name = "input") const {
    CompareOptions options;
    options.what = name + " (inputs must not be modified)";
    return as_assertion(compare_exact(host_, device_.download(), options));
  }

 private:
  std::vector<T> host_;
  DeviceBuffer<T> device_;
};

// A host copy of n elements at `device` (device, pinned or managed memory), made on a private
// stream: it waits for no other stream, so it shows what is there now, held streams or not.
template <class T>
std::vector<T> device_copy(const T* device, std::size_t n) {
  const std::vector<unsigned char> bytes = snapshot(device, n * sizeof(T));
  std::vector<T> out(n);
  if (n > 0) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// A device buffer keeps_to_stream() watches: what a launcher writes.
struct Watched {
  const void* data;
  std::size_t bytes;
  std::string name;
};

// The whole of a buffer (GuardedOutput, DeviceBuffer, PinnedBuffer, ManagedBuffer: anything
// with data() and size()) as keeps_to_stream() watches it: {out.data(), out.size() *
// sizeof(T), name}.
template <class Buffer>
Watched watched(const Buffer& buffer, std::string name) {
  using T = std::remove_cv_t<std::remove_pointer_t<decltype(buffer.data())>>;
  return {buffer.data(), buffer.size() * sizeof(T), std::move(name)};
}

// Runs launch(stream) on a fresh non-blocking stream held shut by a course::StreamGate, and
// succeeds only when every watched buffer stayed as it was until the gate opened. A buffer
// that changed was written by work outside the given stream (the default stream, a stream of
// the launcher's own, a synchronous copy, the host); a launch that did not return until the
// gate gave up waited for the whole device. Either way the message says so. Afterwards only
// that stream has been synchronised, so the watched buffers hold the launcher's results.
::testing::AssertionResult keeps_to_stream(const std::function<void(cudaStream_t)>& launch,
                                           const std::vector<Watched>& watched);

// One kernel launch of a recorded graph, as the launcher configured it: what a test checks
// when the exercise is about the launch itself (a 2D grid, dynamic shared memory sized from the
// block, a cooperative launch), which the results alone cannot show.
struct RecordedLaunch {
  dim3 grid;
  dim3 block;
  unsigned int dynamic_shared_bytes = 0;
  bool cooperative = false;  // launched with cudaLaunchCooperativeKernel (or the attribute)
};

// "grid (a, b, c), block (x, y, z), 0 bytes of dynamic shared memory[, cooperative]".
std::string describe(const RecordedLaunch& launch);

// The nodes of `graph` (cudaGraphGetNodes, in its order): all of them, or only those of `type`.
std::vector<cudaGraphNode_t> graph_nodes(cudaGraph_t graph);
std::vector<cudaGraphNode_t> graph_nodes(cudaGraph_t graph, cudaGraphNodeType type);
// The nodes `node` depends on directly, and the nodes that depend on it directly (CUDA 13
// added edge data to both calls; these ask for none).
std::vector<cudaGraphNode_t> graph_dependencies(cudaGraphNode_t node);
std::vector<cudaGraphNode_t> graph_dependents(cudaGraphNode_t node);

// What a launcher enqueued, recorded into a graph instead of run (stream capture, relaxed mode:
// streams it forks from the captured one with events are recorded too, and their joins become
// edges). Owns the graph and its instantiation.
class RecordedGraph {
 public:
  // Records what `launch(stream)` enqueues on `stream`, which must be a stream of the caller's
  // (not the legacy default stream). An exception from `launch` ends the capture and is kept
  // in problem(), as is a capture that could not end (a synchronisation, a synchronous copy,
  // a forked stream never joined back).
  RecordedGraph(cudaStream_t stream, const std::function<void(cudaStream_t)>& launch);
  ~RecordedGraph();
  RecordedGraph(const RecordedGraph&) = delete;
  RecordedGraph& operator=(const RecordedGraph&) = delete;

  // Empty when the launcher's work was recorded; else what went wrong, in a sentence.
  const std::string& problem() const { return problem_; }
  cudaGraph_t graph() const { return graph_; }
  // The graph's nodes by kind.
  int kernels() const { return kernels_; }
  int memsets() const { return memsets_; }
  int copies() const { return copies_; }
  int others() const { return others_; }
  // The kernel nodes' launch configurations, in no particular order.
  const std::vector<RecordedLaunch>& launches() const { return launches_; }
  // "3 kernel launch(es), 1 memset(s), 0 copy(ies) and 0 other operation(s)".
  std::string census() const;
  // Runs the recorded work again on `stream` (instantiated on first use).
  void replay(cudaStream_t stream);

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::string problem_;
  int kernels_ = 0, memsets_ = 0, copies_ = 0, others_ = 0;
  std::vector<RecordedLaunch> launches_;
};

// What every leak check's failure says first. Other exercises graded at the same time allocate
// device memory too, and free memory cannot tell theirs from the student's, so the grader runs
// a failed case that says this again alone before it charges it (grader/pipeline.py).
inline constexpr char kDeviceMemoryLeaked[] = "device memory leaked";

// The device's free memory now (cudaMemGetInfo).
std::size_t free_device_bytes();

// A leak check: the device's free memory when it is made, against the free memory when
// nothing_leaked() is asked. Both wait for the device first, so what finished work freed is
// back.
class DeviceMemoryWatch {
 public:
  // `slack_bytes`: what may go missing without a leak (the driver's rounding and bookkeeping).
  explicit DeviceMemoryWatch(std::size_t slack_bytes);
  std::size_t free_before() const noexcept { return free_before_; }
  // Fails when more than the slack went missing, saying kDeviceMemoryLeaked, how many MiB,
  // and `advice` (what to free).
  ::testing::AssertionResult nothing_leaked(const std::string& advice) const;

 private:
  std::size_t slack_bytes_;
  std::size_t free_before_;
};

// Threads the current device holds resident at once, whatever the kernel:
// cudaDevAttrMaxThreadsPerMultiProcessor x the SM count (course::sm_count()). No grid of more
// threads than this ever has all its blocks on the GPU together; beside other processes (MPS,
// time slicing) fewer of them fit, never more.
long long resident_thread_capacity();

// An input size for a test whose outcome depends on how many blocks are resident at once (a
// block waiting for other blocks: a hand-made grid barrier, a spin on another block's flag, a
// cooperative launch sized from n): `per_thread` elements for every thread the device holds
// resident (resident_thread_capacity()), plus 3 (a partial tile), at most `most` (the API's
// limit on n). A launcher that gives each thread fewer than `per_thread` elements, one block per
// tile, then launches more blocks than the whole GPU holds, so code that waits for blocks that
// have not started deadlocks (or its cooperative launch is refused) on every GPU, alone or with
// neighbours, while a correct one passes. Sizes from a constant are right only on the GPUs they
// were chosen for.
std::size_t elements_beyond_residency(int per_thread,
                                      std::size_t most = static_cast<std::size_t>(0x7fffffff));

// Sizes that catch indexing bugs (after CUB's tests): 1, below, at and above a warp and a
// block, primes, and a value over a million that is not a multiple of anything convenient.
std::vector<std::size_t> adversarial_sizes();

// What a 1-D test sweeps, in two instantiations: Small/... with the adversarial sizes under
// kLargeSize (quick enough for compute-sanitizer, which the manifests' gtest_filter runs on
// Small/*) and Large/... with the rest. `extra` adds sizes that matter to one exercise (a chunk
// boundary, sizes beyond any sensible grid); each list is sorted, without repeats.
inline constexpr std::size_t kLargeSize = 100000;
std::vector<std::size_t> small_sizes(std::initializer_list<std::size_t> extra = {});
std::vector<std::size_t> large_sizes(std::initializer_list<std::size_t> extra = {});

// The name generator of a size sweep's instantiations: the parameter's name is the prefix and
// the size, "n_1000" (so Small/Suite.Case/n_1000). The grader's manifests and sanitizer filters
// name cases this way, so a sweep keeps the generator it was written with.
struct SizeName {
  const char* prefix;
  std::string operator()(const ::testing::TestParamInfo<std::size_t>& info) const {
    return prefix + std::to_string(info.param);
  }
};
// "n_1000": most sweeps.
inline constexpr SizeName size_name{"n_"};
// "n1000": the sweeps named without the underscore (barriers, constant_broadcast).
inline constexpr SizeName compact_size_name{"n"};

}  // namespace course::testing
