#include "zero_copy_unified.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "course/testing.h"
#include "zero_copy_unified_common.h"

namespace {

constexpr course::Tolerance kTolerance{1e-6, 1e-6};

struct Params {
  float factor;
  float offset;
};
Params draw_params(std::mt19937_64& rng) {
  const auto v = course::random_floats(2, -4.f, 4.f, rng);
  return {v[0], v[1]};
}

void check_zero_copy(std::size_t n) {
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -100.f, 100.f, rng);
  const auto p = draw_params(rng);
  course::PinnedBuffer<float> in(n, cudaHostAllocMapped);
  std::memcpy(in.data(), values.data(), n * sizeof(float));
  auto out = course::testing::poisoned_output<float>(n);
  course::Stream stream;
  saxpy_zero_copy(in.data(), out.data(), p.factor, p.offset, static_cast<int>(n), stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::close(saxpy_reference(values.data(), n, p.factor, p.offset),
                                     out.download(), kTolerance, {{}, "out"}));
  EXPECT_TRUE(course::testing::equal(values, std::vector<float>(in.data(), in.data() + n),
                                     {{}, "host_in (must not be modified)"}));
}

template <class Call>
void check_managed(std::size_t n, Call call) {
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -100.f, 100.f, rng);
  const auto p = draw_params(rng);
  course::ManagedBuffer<float> in(n), out(n);
  // Written by the host, so the pages start out in host memory.
  std::memcpy(in.data(), values.data(), n * sizeof(float));
  std::memset(out.data(), course::kPoisonByte, n * sizeof(float));
  course::Stream stream;
  call(in.data(), out.data(), p.factor, p.offset, static_cast<int>(n), stream.get());
  stream.synchronize();
  EXPECT_TRUE(course::testing::close(saxpy_reference(values.data(), n, p.factor, p.offset),
                                     std::vector<float>(out.data(), out.data() + n), kTolerance,
                                     {{}, "out"}));
  EXPECT_TRUE(course::testing::equal(values, std::vector<float>(in.data(), in.data() + n),
                                     {{}, "in (must not be modified)"}));
}

class SaxpyZeroCopy : public ::testing::TestWithParam<std::size_t> {};
TEST_P(SaxpyZeroCopy, MatchesReference) { check_zero_copy(GetParam()); }
class SaxpyManaged : public ::testing::TestWithParam<std::size_t> {};
TEST_P(SaxpyManaged, OnDemandMatchesReference) { check_managed(GetParam(), saxpy_managed); }
TEST_P(SaxpyManaged, PrefetchedMatchesReference) {
  check_managed(GetParam(), saxpy_managed_prefetched);
}

using course::testing::size_name;
INSTANTIATE_TEST_SUITE_P(Small, SaxpyZeroCopy, ::testing::ValuesIn(course::testing::small_sizes()),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, SaxpyZeroCopy,
                         ::testing::ValuesIn(course::testing::large_sizes({3000017})), size_name);
INSTANTIATE_TEST_SUITE_P(Small, SaxpyManaged, ::testing::ValuesIn(course::testing::small_sizes()),
                         size_name);
INSTANTIATE_TEST_SUITE_P(
    Large, SaxpyManaged,
    ::testing::ValuesIn(course::testing::large_sizes({3000017, (1 << 24) + 1})), size_name);

TEST(ZeroCopyUnified, PrefetchedVariantMovesBothRangesToTheDevice) {
  // The last prefetch location of each range must be this device: the prefetch has to be a
  // real cudaMemPrefetchAsync, not just the on-demand launch under another name.
  const int n = 1 << 20;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -1.f, 1.f, rng);
  course::ManagedBuffer<float> in(n), out(n);
  std::memcpy(in.data(), values.data(), n * sizeof(float));
  std::memset(out.data(), 0, n * sizeof(float));
  course::Stream stream;
  saxpy_managed_prefetched(in.data(), out.data(), 2.f, 1.f, n, stream);
  stream.synchronize();
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  for (float* range : {in.data(), out.data()}) {
    int type = -1;
    int id = -1;
    CUDA_CHECK(cudaMemRangeGetAttribute(&type, sizeof type,
                                        cudaMemRangeAttributeLastPrefetchLocationType, range,
                                        n * sizeof(float)));
    CUDA_CHECK(cudaMemRangeGetAttribute(&id, sizeof id,
                                        cudaMemRangeAttributeLastPrefetchLocationId, range,
                                        n * sizeof(float)));
    EXPECT_EQ(type, static_cast<int>(cudaMemLocationTypeDevice))
        << (range == in.data() ? "in" : "out") << " was not prefetched to a device";
    EXPECT_EQ(id, device) << (range == in.data() ? "in" : "out")
                          << " was not prefetched to the current device";
  }
  EXPECT_TRUE(course::testing::close(saxpy_reference(values.data(), n, 2.f, 1.f),
                                     std::vector<float>(out.data(), out.data() + n), kTolerance,
                                     {{}, "out"}));
}

// Zero-copy means the kernel itself reads the mapped host memory, over the bus, when it runs.
// Copying host_in to the device first gives the same out, so two things are checked. The call
// recorded into a graph instead of run holds one kernel and nothing else (no copy, allocation
// or second kernel on the stream). And with the stream held shut, values the host writes into
// host_in after the call has returned, before the kernel may start, are the ones out is made
// of (a synchronous copy elsewhere took the old ones). One ordinary call first loads the kernel
// outside the recording.
TEST(ZeroCopyUnified, ZeroCopyKernelReadsTheHostMemoryItself) {
  const int n = 1 << 20;
  auto rng = course::testing::case_rng();
  const auto p = draw_params(rng);
  course::PinnedBuffer<float> in(n, cudaHostAllocMapped);
  const auto first = course::random_floats(n, -100.f, 100.f, rng);
  std::memcpy(in.data(), first.data(), in.bytes());
  auto out = course::testing::poisoned_output<float>(n);
  course::Stream stream;
  saxpy_zero_copy(in.data(), out.data(), p.factor, p.offset, n, stream);
  stream.synchronize();
  course::testing::RecordedGraph recorded(stream, [&](cudaStream_t s) {
    saxpy_zero_copy(in.data(), out.data(), p.factor, p.offset, n, s);
  });
  ASSERT_TRUE(recorded.problem().empty()) << "saxpy_zero_copy: " << recorded.problem();
  EXPECT_TRUE(recorded.kernels() == 1 && recorded.memsets() + recorded.copies() +
                                             recorded.others() == 0)
      << "saxpy_zero_copy enqueued " << recorded.census() << "; expected one kernel and "
      << "nothing else: the kernel reads host_in through its device pointer "
      << "(cudaHostGetDevicePointer), with no copy to the device first";

  const auto later = course::random_floats(n, -100.f, 100.f, rng);
  out.fill_bytes(course::kPoisonByte);
  {
    course::StreamGate gate(stream);
    saxpy_zero_copy(in.data(), out.data(), p.factor, p.offset, n, stream);
    std::memcpy(in.data(), later.data(), in.bytes());  // the kernel has not started yet
    gate.open();
    stream.synchronize();
    ASSERT_FALSE(gate.gave_up()) << "saxpy_zero_copy waited for its own stream to finish";
  }
  EXPECT_TRUE(course::testing::close(saxpy_reference(later.data(), n, p.factor, p.offset),
                                     out.download(), kTolerance,
                                     {{}, "out, from host_in as the host rewrote it after the "
                                          "call and before the kernel ran (a copy made during "
                                          "the call gives the old values)"}));
}

// keeps_to_stream holds the stream shut while the function returns: a launch or a prefetch
// anywhere else (the default stream, a stream of its own) writes out meanwhile, and waiting
// on the stream is reported. RunsOnTheGivenStream is saxpy_zero_copy's case.
TEST(ZeroCopyUnifiedEdge, RunsOnTheGivenStream) {
  const int n = 1 << 20;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -100.f, 100.f, rng);
  const auto p = draw_params(rng);
  course::PinnedBuffer<float> in(n, cudaHostAllocMapped);
  std::memcpy(in.data(), values.data(), in.bytes());
  auto out = course::testing::poisoned_output<float>(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { saxpy_zero_copy(in.data(), out.data(), p.factor, p.offset, n, s); },
      {course::testing::watched(out, "out")}));
  EXPECT_TRUE(course::testing::close(saxpy_reference(values.data(), n, p.factor, p.offset),
                                     out.download(), kTolerance, {{}, "out"}));
}

template <class Call>
void check_managed_keeps_to_stream(Call call) {
  const int n = 1 << 20;
  auto rng = course::testing::case_rng();
  const auto values = course::random_floats(n, -100.f, 100.f, rng);
  const auto p = draw_params(rng);
  course::ManagedBuffer<float> in(n), out(n);
  std::memcpy(in.data(), values.data(), in.bytes());
  std::memset(out.data(), course::kPoisonByte, out.bytes());
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { call(in.data(), out.data(), p.factor, p.offset, n, s); },
      {course::testing::watched(out, "out")}));
  EXPECT_TRUE(course::testing::close(saxpy_reference(values.data(), n, p.factor, p.offset),
                                     std::vector<float>(out.data(), out.data() + n), kTolerance,
                                     {{}, "out"}));
}

TEST(ZeroCopyUnifiedEdge, ManagedRunsOnTheGivenStream) {
  check_managed_keeps_to_stream(saxpy_managed);
}
TEST(ZeroCopyUnifiedEdge, ManagedPrefetchedRunsOnTheGivenStream) {
  check_managed_keeps_to_stream(saxpy_managed_prefetched);
}

// Same buffers, new contents and new factor and offset: a function that remembers its last
// answer by pointer or by size returns the first call's out the second time.
// CallsAgainWithNewInputs is saxpy_zero_copy's case.
TEST(ZeroCopyUnifiedEdge, CallsAgainWithNewInputs) {
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::PinnedBuffer<float> in(n, cudaHostAllocMapped);
  course::DeviceBuffer<float> out(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto values = course::random_floats(n, -100.f, 100.f, rng);
    const auto p = draw_params(rng);
    std::memcpy(in.data(), values.data(), in.bytes());
    out.fill_bytes(course::kPoisonByte);
    saxpy_zero_copy(in.data(), out.data(), p.factor, p.offset, n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::close(saxpy_reference(values.data(), n, p.factor, p.offset),
                                       out.download(), kTolerance, {{}, "out after the " + call}));
  }
}

template <class Call>
void check_managed_calls_again(Call call) {
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::ManagedBuffer<float> in(n), out(n);
  for (const std::string name : {"first call", "second call"}) {
    const auto values = course::random_floats(n, -100.f, 100.f, rng);
    const auto p = draw_params(rng);
    std::memcpy(in.data(), values.data(), in.bytes());
    std::memset(out.data(), course::kPoisonByte, out.bytes());
    call(in.data(), out.data(), p.factor, p.offset, n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::close(saxpy_reference(values.data(), n, p.factor, p.offset),
                                       std::vector<float>(out.data(), out.data() + n),
                                       kTolerance, {{}, "out after the " + name}));
  }
}

TEST(ZeroCopyUnifiedEdge, ManagedCallsAgainWithNewInputs) {
  check_managed_calls_again(saxpy_managed);
}
TEST(ZeroCopyUnifiedEdge, ManagedPrefetchedCallsAgainWithNewInputs) {
  check_managed_calls_again(saxpy_managed_prefetched);
}

}  // namespace
