#include "overlap_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "course/stream_gate.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedOutput;

// Few steps: the CPU reference stays quick at a million elements, and the chain still
// changes every bit of the input.
constexpr int kIterations = 20;
// Floats of poisoned host memory kept on each side of a host array.
constexpr std::size_t kHostGuard = 64;

using HostArray = course::testing::Owned<float[], free_host>;

HostArray host_array(std::size_t n) {
  return course::testing::owned_result<HostArray>(alloc_host(n), n == 0,
                                                  "alloc_host(" + std::to_string(n) + ")");
}

std::vector<float> transformed(const std::vector<float>& in, int iterations) {
  return course::testing::host_map(in, [=](float x) { return pipeline_transform(x, iterations); });
}

// The caller's worker streams, non-blocking as the header promises.
class Workers {
 public:
  explicit Workers(int count) {
    for (int w = 0; w < count; ++w) {
      owned_.push_back(std::make_unique<course::Stream>(cudaStreamNonBlocking));
      handles_.push_back(owned_.back()->get());
    }
  }
  const cudaStream_t* data() const { return handles_.data(); }
  cudaStream_t operator[](int w) const { return handles_[static_cast<std::size_t>(w)]; }

 private:
  std::vector<std::unique_ptr<course::Stream>> owned_;
  std::vector<cudaStream_t> handles_;
};

// host_in and host_out from alloc_host, each with kHostGuard poisoned floats before and after
// it (so a write outside [0, n) is seen); dev_in and dev_out between device guard zones.
class PipelineArrays {
 public:
  explicit PipelineArrays(std::size_t n)
      : n_(n), in_storage_(host_array(n + 2 * kHostGuard)),
        out_storage_(host_array(n + 2 * kHostGuard)) {
    reset_devices();
  }
  bool allocated() const { return in_storage_ != nullptr && out_storage_ != nullptr; }
  float* host_in() { return in_storage_.get() + kHostGuard; }
  float* host_out() { return out_storage_.get() + kHostGuard; }
  float* dev_in() { return dev_in_->data(); }
  float* dev_out() { return dev_out_->data(); }

  // New inputs in host_in, every output (and every guard) poisoned.
  void load(const std::vector<float>& values) {
    const std::size_t total = (n_ + 2 * kHostGuard) * sizeof(float);
    std::memset(in_storage_.get(), course::kPoisonByte, total);
    std::memset(out_storage_.get(), course::kPoisonByte, total);
    std::copy(values.begin(), values.end(), host_in());
    reset_devices();
    // The device poison is written on the legacy stream, which the non-blocking streams
    // of the call do not wait for.
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  void run(int iterations, int chunks, const Workers& workers, int num_workers,
           cudaStream_t stream) {
    run_pipeline(host_in(), host_out(), dev_in(), dev_out(), n_, iterations, chunks,
                 workers.data(), num_workers, stream);
  }

  // A call's usual result: dev_in holds the input, both outputs its transform.
  void expect(const std::vector<float>& input, const std::vector<float>& output,
              const std::string& what) {
    expect(input, input, output, what);
  }

  // Every array against what the call must leave, `what` naming the call in messages:
  // host_in still `input`, dev_in `uploaded`, dev_out and host_out `output`.
  void expect(const std::vector<float>& input, const std::vector<float>& uploaded,
              const std::vector<float>& output, const std::string& what) {
    EXPECT_TRUE(course::testing::equal(output, copy(host_out()), {{}, "host_out " + what}));
    EXPECT_TRUE(course::testing::equal(output, dev_out_->download(), {{}, "dev_out " + what}));
    EXPECT_TRUE(course::testing::equal(uploaded, dev_in_->download(), {{}, "dev_in " + what}));
    EXPECT_TRUE(course::testing::equal(
        input, copy(host_in()), {{}, "host_in " + what + " (inputs must not be modified)"}));
    EXPECT_TRUE(host_guards_intact(in_storage_.get(), "host_in " + what));
    EXPECT_TRUE(host_guards_intact(out_storage_.get(), "host_out " + what));
    EXPECT_TRUE(dev_in_->guards_intact("dev_in " + what));
    EXPECT_TRUE(dev_out_->guards_intact("dev_out " + what));
  }

 private:
  std::vector<float> copy(const float* host) const { return {host, host + n_}; }

  // The guards around the n floats that follow kHostGuard floats at `storage`.
  ::testing::AssertionResult host_guards_intact(const float* storage, const std::string& name) {
    const auto* front = reinterpret_cast<const unsigned char*>(storage);
    const auto* back = reinterpret_cast<const unsigned char*>(storage + kHostGuard + n_);
    return course::testing::check_guards(front, kHostGuard, back, kHostGuard, sizeof(float), n_,
                                         name);
  }

  void reset_devices() {
    dev_in_ = std::make_unique<GuardedOutput<float>>(n_);
    dev_out_ = std::make_unique<GuardedOutput<float>>(n_);
  }

  std::size_t n_;
  HostArray in_storage_;
  HostArray out_storage_;
  std::unique_ptr<GuardedOutput<float>> dev_in_;
  std::unique_ptr<GuardedOutput<float>> dev_out_;
};

TEST(PipelineAlloc, AllocHostReturnsPageLockedMemory) {
  const std::size_t n = 12345;
  HostArray p = host_array(n);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(course::testing::page_locked(p.get()))
      << ": alloc_host returned pageable memory, which copies only through a driver bounce "
         "buffer, waiting for the stream, and never beside a kernel. Allocate it with "
         "cudaMallocHost or cudaHostAlloc.";
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -1.f, 1.f, rng);
  std::copy(values.begin(), values.end(), p.get());
  EXPECT_TRUE(course::testing::equal(values, std::vector<float>(p.get(), p.get() + n),
                                     {{}, "alloc_host memory written and read by the host"}));
}

TEST(PipelineAlloc, AllocZeroGivesNullptr) {
  float* p = alloc_host(0);
  EXPECT_EQ(p, nullptr) << "alloc_host(0) must return nullptr";
  free_host(p);  // must accept nullptr
  HostArray q = host_array(3);
  EXPECT_NE(q, nullptr);
}

struct Split {
  int chunks;
  int workers;
};

std::string describe(const Split& split) {
  return "(chunks " + std::to_string(split.chunks) + ", workers " +
         std::to_string(split.workers) + ")";
}

// One call per split: one chunk; several chunks on one worker; as many workers as chunks;
// chunk counts that do not divide n; more workers than chunks; more chunks than elements.
std::vector<Split> splits_for(std::size_t n) {
  std::vector<Split> splits = {{1, 1}, {3, 1}, {4, 4}, {7, 3}, {16, 4}, {2, 5}};
  if (n <= 1000) splits.push_back({static_cast<int>(n) + 3, 4});
  return splits;
}

void check_every_split(std::size_t n) {
  auto rng = course::testing::case_rng();
  const auto input = course::random_floats(n, -1.f, 1.f, rng);
  const auto expected = transformed(input, kIterations);
  PipelineArrays arrays(n);
  ASSERT_TRUE(arrays.allocated());
  Workers workers(8);
  course::Stream stream(cudaStreamNonBlocking);
  for (const Split& split : splits_for(n)) {
    arrays.load(input);
    arrays.run(kIterations, split.chunks, workers, split.workers, stream);
    // The whole device, so results are there even when the work went elsewhere: the cases
    // that hold a stream shut tell where it ran.
    CUDA_CHECK(cudaDeviceSynchronize());
    arrays.expect(input, expected, "after the call " + describe(split));
  }
}

class Pipeline : public ::testing::TestWithParam<std::size_t> {};
TEST_P(Pipeline, MatchesReferenceForEverySplit) { check_every_split(GetParam()); }

using course::testing::size_name;

INSTANTIATE_TEST_SUITE_P(Small, Pipeline, ::testing::ValuesIn(course::testing::small_sizes()),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, Pipeline,
                         ::testing::ValuesIn(course::testing::large_sizes({(1u << 22) + 3})),
                         size_name);

TEST(PipelineEdge, ZeroElementsWritesNothingThenFiveWork) {
  // n = 0 must enqueue nothing (a grid of zero blocks is an error) and write nothing; the
  // same arrays then take n = 5, so doing nothing at all does not pass.
  const std::size_t capacity = 64;
  auto rng = course::testing::case_rng();
  const auto input = course::random_floats(capacity, -1.f, 1.f, rng);
  PipelineArrays arrays(capacity);
  ASSERT_TRUE(arrays.allocated());
  Workers workers(2);
  course::Stream stream(cudaStreamNonBlocking);
  arrays.load(input);
  run_pipeline(arrays.host_in(), arrays.host_out(), arrays.dev_in(), arrays.dev_out(), 0,
               kIterations, 3, workers.data(), 2, stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto poison = course::testing::poison_values<float>(capacity);
  arrays.expect(input, poison, poison, "after a call with n = 0");

  run_pipeline(arrays.host_in(), arrays.host_out(), arrays.dev_in(), arrays.dev_out(), 5,
               kIterations, 3, workers.data(), 2, stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> uploaded(input.begin(), input.begin() + 5);
  std::vector<float> expected = transformed(uploaded, kIterations);
  uploaded.insert(uploaded.end(), poison.begin() + 5, poison.end());
  expected.insert(expected.end(), poison.begin() + 5, poison.end());
  arrays.expect(input, uploaded, expected, "after a call with n = 5 on arrays of 64");
}

TEST(PipelineEdge, ZeroIterationsCopiesTheInput) {
  const std::size_t n = 1000;
  auto rng = course::testing::case_rng();
  const auto input = course::random_floats(n, -1.f, 1.f, rng);
  PipelineArrays arrays(n);
  ASSERT_TRUE(arrays.allocated());
  Workers workers(3);
  course::Stream stream(cudaStreamNonBlocking);
  arrays.load(input);
  arrays.run(0, 5, workers, 3, stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  arrays.expect(input, input, "after a call with iterations = 0");
}

TEST(PipelineEdge, CallsAgainWithNewInputs) {
  // Same arrays, new contents: a pipeline that remembers its last result by pointer or by
  // size returns the first call's outputs the second time.
  const std::size_t n = 100003;
  auto rng = course::testing::case_rng();
  PipelineArrays arrays(n);
  ASSERT_TRUE(arrays.allocated());
  Workers workers(3);
  course::Stream stream(cudaStreamNonBlocking);
  for (const std::string call : {"first call", "second call"}) {
    const auto input = course::random_floats(n, -1.f, 1.f, rng);
    arrays.load(input);
    arrays.run(kIterations, 5, workers, 3, stream);
    CUDA_CHECK(cudaDeviceSynchronize());
    arrays.expect(input, transformed(input, kIterations), "after the " + call);
  }
}

TEST(PipelineEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the given stream shut while run_pipeline returns: a worker that
  // does not wait for that stream (no fork), work on the default stream or a synchronous
  // copy writes an output meanwhile, and waiting for the device never returns.
  const std::size_t n = std::size_t{1} << 20;
  auto rng = course::testing::case_rng();
  const auto input = course::random_floats(n, -1.f, 1.f, rng);
  PipelineArrays arrays(n);
  ASSERT_TRUE(arrays.allocated());
  Workers workers(3);
  arrays.load(input);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { arrays.run(kIterations, 8, workers, 3, s); },
      {{arrays.dev_in(), n * sizeof(float), "dev_in"},
       {arrays.dev_out(), n * sizeof(float), "dev_out"},
       {arrays.host_out(), n * sizeof(float), "host_out"}}));
  // keeps_to_stream synchronised only the given stream: the join must have covered the rest.
  arrays.expect(input, transformed(input, kIterations),
                "once the given stream finished (did it wait for every worker?)");
}

// Whether `marker` completes within about 20 ms.
bool completes_soon(cudaEvent_t marker) {
  for (int poll = 0; poll < 10; ++poll) {
    const cudaError_t status = cudaEventQuery(marker);
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) CUDA_CHECK(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

TEST(PipelineHeld, JoinsEveryWorkerBackIntoTheStream) {
  // One worker at a time is held shut by a gate; work enqueued on the given stream after
  // run_pipeline must not run until that worker's chunks are done. It does when the join
  // is missing for that worker, when the chunk went to another stream than
  // workers[c % num_workers], or when the work ran on the default stream.
  const std::size_t n = 300007;
  const int num_workers = 3;
  const int chunks = 6;
  auto rng = course::testing::case_rng();
  const auto input = course::random_floats(n, -1.f, 1.f, rng);
  const auto expected = transformed(input, kIterations);
  PipelineArrays arrays(n);
  ASSERT_TRUE(arrays.allocated());
  Workers workers(num_workers);
  course::Stream stream(cudaStreamNonBlocking);
  course::Event marker(cudaEventDisableTiming);
  for (int held = 0; held < num_workers; ++held) {
    const std::string which = "workers[" + std::to_string(held) + "]";
    arrays.load(input);
    bool ran_early = false;
    bool gave_up = false;
    {
      course::StreamGate gate(workers[held]);
      arrays.run(kIterations, chunks, workers, num_workers, stream);
      marker.record(stream);
      ran_early = completes_soon(marker);
      gave_up = gate.gave_up();  // opens the gate
    }
    ASSERT_FALSE(gave_up) << "run_pipeline did not return while " << which
                          << " was held shut: it waited for the device (cudaDeviceSynchronize, "
                             "cudaStreamSynchronize, a synchronous or pageable copy). Only "
                             "enqueue work; the caller decides when to wait.";
    ASSERT_FALSE(ran_early)
        << "work enqueued on the given stream after run_pipeline ran while " << which
        << " was held shut, before the chunks of " << which
        << " could run: record an event on every worker after its last operation and make "
           "the given stream cudaStreamWaitEvent on each (the join), and give chunk c to "
           "workers[c % num_workers]";
    stream.synchronize();
    arrays.expect(input, expected, "with " + which + " held, once the given stream finished");
  }
}

}  // namespace
