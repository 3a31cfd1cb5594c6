#include "stream_priorities.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

std::vector<float> reference(const std::vector<float>& in) {
  return course::testing::host_map(in, urgent_response);
}

// The pair create_priority_streams makes, destroyed at the end of the case.
class PriorityStreams {
 public:
  PriorityStreams() { create_priority_streams(&urgent, &background); }
  ~PriorityStreams() {
    // Streams never made are not handed back (nullptr is the default stream), and an error
    // fails the case instead of escaping the destructor.
    if (urgent == nullptr || background == nullptr || urgent == background) return;
    try {
      destroy_priority_streams(urgent, background);
    } catch (const std::exception& error) {
      ADD_FAILURE() << "destroy_priority_streams: " << error.what();
    }
  }
  PriorityStreams(const PriorityStreams&) = delete;
  PriorityStreams& operator=(const PriorityStreams&) = delete;

  cudaStream_t urgent = nullptr;
  cudaStream_t background = nullptr;
};

bool is_default_stream(cudaStream_t stream) {
  return stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

TEST(PriorityStreamsCreate, AreTheEndsOfTheRange) {
  int least = 0, greatest = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  ASSERT_LT(greatest, least) << "this device offers a single stream priority";
  PriorityStreams streams;
  ASSERT_FALSE(is_default_stream(streams.urgent) || is_default_stream(streams.background))
      << "create_priority_streams left a default stream (nullptr) where it should create one";
  int urgent = 0, background = 0;
  CUDA_CHECK(cudaStreamGetPriority(streams.urgent, &urgent));
  CUDA_CHECK(cudaStreamGetPriority(streams.background, &background));
  EXPECT_EQ(urgent, greatest)
      << "the urgent stream's priority should be the greatest the device offers, the lower "
      << "number `greatest` of cudaDeviceGetStreamPriorityRange(&least, &greatest); it is "
      << urgent << " (range " << greatest << " .. " << least << ")";
  EXPECT_EQ(background, least)
      << "the background stream's priority should be the least, `least` of "
      << "cudaDeviceGetStreamPriorityRange(&least, &greatest); it is " << background
      << " (range " << greatest << " .. " << least << ")";
}

TEST(PriorityStreamsCreate, AreNonBlockingAndDistinct) {
  PriorityStreams streams;
  ASSERT_FALSE(is_default_stream(streams.urgent) || is_default_stream(streams.background))
      << "create_priority_streams left a default stream (nullptr) where it should create one";
  EXPECT_NE(streams.urgent, streams.background) << "urgent and background are the same stream";
  for (const auto& [stream, name] :
       {std::pair{streams.urgent, "urgent"}, std::pair{streams.background, "background"}}) {
    unsigned int flags = 0;
    CUDA_CHECK(cudaStreamGetFlags(stream, &flags));
    EXPECT_TRUE(flags & cudaStreamNonBlocking)
        << "the " << name << " stream is a blocking stream, so it waits for every launch on "
        << "the legacy default stream: pass cudaStreamNonBlocking to "
        << "cudaStreamCreateWithPriority";
  }
}

TEST(PriorityStreamsCreate, EveryCallMakesNewStreams) {
  // Streams kept in static storage and handed out again would be destroyed twice.
  PriorityStreams first, second;
  const std::set<cudaStream_t> all = {first.urgent, first.background, second.urgent,
                                      second.background};
  EXPECT_EQ(all.size(), 4u) << "two calls of create_priority_streams returned the same streams";
}

void check_urgent(std::size_t n) {
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_floats(n, -1.f, 1.f, rng);
  GuardedInput<float> in(in_host);
  GuardedOutput<float> out(n);
  course::Stream stream;
  submit_urgent(in.data(), out.data(), n, stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(reference(in_host), out.download(), {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_TRUE(in.unchanged("in"));
}

class SubmitUrgent : public ::testing::TestWithParam<std::size_t> {};
TEST_P(SubmitUrgent, MatchesReference) { check_urgent(GetParam()); }

using course::testing::size_name;

// The adversarial sizes, the benchmark's 2048, and sizes beyond a few blocks per SM.
INSTANTIATE_TEST_SUITE_P(Small, SubmitUrgent,
                         ::testing::ValuesIn(course::testing::small_sizes({2048})), size_name);
INSTANTIATE_TEST_SUITE_P(Large, SubmitUrgent,
                         ::testing::ValuesIn(course::testing::large_sizes({(1u << 22) + 5})),
                         size_name);

TEST(SubmitUrgentEdge, OnItsOwnPriorityStream) {
  // The pair the benchmark uses: submit_urgent on the urgent stream.
  const std::size_t n = 2048;
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_floats(n, -1.f, 1.f, rng);
  GuardedInput<float> in(in_host);
  GuardedOutput<float> out(n);
  PriorityStreams streams;
  ASSERT_FALSE(is_default_stream(streams.urgent))
      << "create_priority_streams left the urgent stream a default stream (nullptr)";
  submit_urgent(in.data(), out.data(), n, streams.urgent);
  CUDA_CHECK(cudaStreamSynchronize(streams.urgent));
  EXPECT_TRUE(course::testing::equal(reference(in_host), out.download(), {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
}

TEST(SubmitUrgentEdge, ZeroElementsWriteNothingThenFiveWork) {
  constexpr std::size_t kCount = 64;
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_floats(kCount, -1.f, 1.f, rng);
  GuardedInput<float> in(in_host);
  GuardedOutput<float> out(kCount);
  submit_urgent(in.data(), out.data(), 0, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  auto expected = course::testing::poison_values<float>(kCount);
  EXPECT_TRUE(course::testing::equal(expected, out.download(), {{}, "out after n = 0"}));
  EXPECT_TRUE(out.guards_intact("out after n = 0"));
  submit_urgent(in.data(), out.data(), 5, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto first = reference(std::vector<float>(in_host.begin(), in_host.begin() + 5));
  std::copy(first.begin(), first.end(), expected.begin());
  EXPECT_TRUE(course::testing::equal(expected, out.download(), {{}, "out after n = 5"}));
  EXPECT_TRUE(out.guards_intact("out after n = 5"));
}

TEST(SubmitUrgentEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the stream shut while submit_urgent returns: a launch anywhere else
  // (the default stream, a stream of its own) writes out meanwhile, and waiting on the stream
  // is reported.
  const std::size_t n = 300001;
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_floats(n, -1.f, 1.f, rng);
  GuardedInput<float> in(in_host);
  auto out = course::testing::poisoned_output<float>(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { submit_urgent(in.data(), out.data(), n, s); },
      {{out.data(), n * sizeof(float), "out"}}));
  EXPECT_TRUE(course::testing::equal(reference(in_host), out.download(), {{}, "out"}));
}

TEST(SubmitUrgentEdge, CallsAgainWithNewInputs) {
  // Same buffers, new contents: a launcher that remembers its last answer by pointer or by
  // size returns the first call's out the second time.
  const std::size_t n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> in(n), out(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto in_host = course::random_floats(n, -1.f, 1.f, rng);
    in.upload(in_host);
    out.fill_bytes(course::kPoisonByte);
    submit_urgent(in.data(), out.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(reference(in_host), out.download(),
                                       {{}, "out after the " + call}));
  }
}

}  // namespace
