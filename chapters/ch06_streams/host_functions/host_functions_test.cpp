#include "host_functions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "course/stream_gate.h"
#include "course/testing.h"
#include "host_functions_reference.h"

namespace {

using course::testing::GuardedOutput;

constexpr std::size_t kCounts = static_cast<std::size_t>(kHistogramBlocks) * kLevels;

// The buffers an EqualiseScratch names, every one poisoned, so a step that reads one before
// the step that fills it has run computes from poison.
struct ScratchBuffers {
  course::DeviceBuffer<unsigned int> block_histograms{kCounts};
  course::PinnedBuffer<unsigned int> host_block_histograms{kCounts};
  course::PinnedBuffer<float> host_lut{kLevels};
  course::DeviceBuffer<float> lut{kLevels};

  ScratchBuffers() { poison(); }
  void poison() {
    block_histograms.fill_bytes(course::kPoisonByte);
    lut.fill_bytes(course::kPoisonByte);
    std::memset(host_block_histograms.data(), course::kPoisonByte, host_block_histograms.bytes());
    std::memset(host_lut.data(), course::kPoisonByte, host_lut.bytes());
  }
  EqualiseScratch view() {
    return {block_histograms.data(), host_block_histograms.data(), host_lut.data(), lut.data()};
  }
  std::vector<course::testing::Watched> watched() const {
    return {course::testing::watched(block_histograms, "scratch.block_histograms"),
            course::testing::watched(host_block_histograms,
                                     "scratch.host_block_histograms (pinned)"),
            course::testing::watched(host_lut, "scratch.host_lut (pinned)"),
            course::testing::watched(lut, "scratch.lut")};
  }
};

// An image whose levels fill a random sub-range unevenly (the smaller of two uniform draws),
// so equalisation moves every level but the lowest.
std::vector<unsigned char> random_image(std::size_t n, std::mt19937_64& rng) {
  const int low = std::uniform_int_distribution<int>(0, 100)(rng);
  const int span = std::uniform_int_distribution<int>(20, 255 - low)(rng);
  const auto first = course::random_ints(n, 0, span, rng);
  const auto second = course::random_ints(n, 0, span, rng);
  std::vector<unsigned char> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<unsigned char>(low + std::min(first[i], second[i]));
  return out;
}

void check_equalise(const std::vector<unsigned char>& image, const std::string& what) {
  const std::size_t n = image.size();
  course::testing::GuardedInput<unsigned char> pixels(image);
  GuardedOutput<float> intensities(n);
  ScratchBuffers scratch;
  course::Stream stream;
  CUDA_CHECK(cudaDeviceSynchronize());  // the poison lands before the stream's work
  equalise(pixels.data(), intensities.data(), n, scratch.view(), stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(equalise_reference(image), intensities.download(),
                                     {{}, "intensities of " + what}));
  EXPECT_TRUE(intensities.guards_intact("intensities"));
  EXPECT_TRUE(pixels.unchanged("pixels"));
}

class Equalise : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Equalise, MatchesReference) {
  auto rng = course::testing::case_rng();
  check_equalise(random_image(GetParam(), rng), "a random image");
}

using course::testing::size_name;

// Sizes around one histogram block's share and around the whole histogram grid.
INSTANTIATE_TEST_SUITE_P(
    Small, Equalise,
    ::testing::ValuesIn(course::testing::small_sizes(
        {kHistogramBlocks * 256 - 1, kHistogramBlocks * 256, kHistogramBlocks * 256 + 1})),
    size_name);
INSTANTIATE_TEST_SUITE_P(Large, Equalise,
                         ::testing::ValuesIn(course::testing::large_sizes({(1u << 24) + 3})),
                         size_name);

TEST(EqualiseEdge, OneLevelIsLeftAsItIs) {
  auto rng = course::testing::case_rng();
  const auto level = static_cast<unsigned char>(std::uniform_int_distribution<int>(1, 254)(rng));
  check_equalise(std::vector<unsigned char>(1000, level), "an image of one level");
}

TEST(EqualiseEdge, ExtremeLevels) {
  // Levels 0 and 255 only: the table's first and last entries.
  auto rng = course::testing::case_rng();
  const auto bits = course::random_ints(5000, 0, 1, rng);
  std::vector<unsigned char> image(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) image[i] = bits[i] ? 255 : 0;
  check_equalise(image, "an image of levels 0 and 255");
}

TEST(EqualiseEdge, ZeroElementsWritesNothingThenFiveWork) {
  // n = 0 enqueues nothing and touches nothing; the same buffers then take a real call, so
  // doing nothing at all does not pass this case.
  constexpr std::size_t kCount = 64;
  auto rng = course::testing::case_rng();
  const auto image = random_image(kCount, rng);
  course::testing::GuardedInput<unsigned char> pixels(image);
  GuardedOutput<float> intensities(kCount);
  ScratchBuffers scratch;
  course::Stream stream;
  CUDA_CHECK(cudaDeviceSynchronize());
  equalise(pixels.data(), intensities.data(), 0, scratch.view(), stream);
  stream.synchronize();
  const auto poison = course::testing::poison_values<float>(kCount);
  EXPECT_TRUE(course::testing::equal(poison, intensities.download(),
                                     {{}, "intensities after a call with n = 0"}));

  equalise(pixels.data(), intensities.data(), 5, scratch.view(), stream);
  stream.synchronize();
  auto expected = equalise_reference(std::vector<unsigned char>(image.begin(), image.begin() + 5));
  expected.insert(expected.end(), poison.begin() + 5, poison.end());
  EXPECT_TRUE(course::testing::equal(expected, intensities.download(),
                                     {{}, "intensities after a call with n = 5"}));
  EXPECT_TRUE(intensities.guards_intact("intensities after a call with n = 5"));
}

TEST(EqualiseEdge, CallsAgainWithNewInputs) {
  // Same buffers and scratch, a new image: a table or result remembered from the first call
  // (by pointer or by size) fails the second check.
  const std::size_t n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<unsigned char> pixels(n);
  course::DeviceBuffer<float> intensities(n);
  ScratchBuffers scratch;
  course::Stream stream;
  for (const std::string call : {"first call", "second call"}) {
    const auto image = random_image(n, rng);
    pixels.upload(image);
    intensities.fill_bytes(course::kPoisonByte);
    CUDA_CHECK(cudaDeviceSynchronize());
    equalise(pixels.data(), intensities.data(), n, scratch.view(), stream);
    stream.synchronize();
    EXPECT_TRUE(course::testing::equal(equalise_reference(image), intensities.download(),
                                       {{}, "intensities after the " + call}));
  }
}

TEST(EqualiseEdge, BackToBackCallsShareAScratch) {
  // Two calls on one stream and one scratch, with no wait between them: the stream orders
  // the second call's steps after the first's, so both results must be right.
  auto rng = course::testing::case_rng();
  const auto first = random_image(65537, rng), second = random_image(4099, rng);
  course::DeviceBuffer<unsigned char> first_pixels(first), second_pixels(second);
  GuardedOutput<float> first_out(first.size()), second_out(second.size());
  ScratchBuffers scratch;
  course::Stream stream;
  CUDA_CHECK(cudaDeviceSynchronize());
  equalise(first_pixels.data(), first_out.data(), first.size(), scratch.view(), stream);
  equalise(second_pixels.data(), second_out.data(), second.size(), scratch.view(), stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(equalise_reference(first), first_out.download(),
                                     {{}, "intensities of the first call"}));
  EXPECT_TRUE(course::testing::equal(equalise_reference(second), second_out.download(),
                                     {{}, "intensities of the second call"}));
}

// The host nodes of a recorded graph: what cudaLaunchHostFunc enqueued while it was recorded.
std::vector<cudaGraphNode_t> host_nodes(cudaGraph_t graph) {
  return course::testing::graph_nodes(graph, cudaGraphNodeTypeHost);
}

// What the stream runs in place of the student's host step below: nothing at all.
void CUDART_CB skipped_host_step(void* /*user_data*/) {}

TEST(EqualiseEdge, TheHostStepIsTheEnqueuedHostFunction) {
  // Right intensities alone do not show where the table was built: a kernel could build it
  // on the device beside a host function that does nothing. So the call is recorded into a
  // graph instead of run, where its host function is a host node, and replayed with that
  // node emptied: the kernels and copies run, and the table must not appear (no kernel or
  // copy builds it). Then the test calls the student's host function itself, with the user
  // data equalise gave it, once the counts are in pinned memory: it must build the table.
  const std::size_t n = 65537;
  auto rng = course::testing::case_rng();
  const auto image = random_image(n, rng);
  course::testing::GuardedInput<unsigned char> pixels(image);
  auto intensities = course::testing::poisoned_output<float>(n);
  ScratchBuffers scratch;
  course::Stream stream;
  // Run first, which also keeps one-time set-up (loading the kernels) out of the recording.
  equalise(pixels.data(), intensities.data(), n, scratch.view(), stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(equalise_reference(image), intensities.download(),
                                     {{}, "intensities of the call that was run"}));
  scratch.poison();
  CUDA_CHECK(cudaDeviceSynchronize());

  course::testing::RecordedGraph recorded(stream, [&](cudaStream_t s) {
    equalise(pixels.data(), intensities.data(), n, scratch.view(), s);
  });
  ASSERT_TRUE(recorded.problem().empty()) << "equalise: " << recorded.problem();
  const auto hosts = host_nodes(recorded.graph());
  ASSERT_EQ(hosts.size(), 1u)
      << "equalise enqueued " << recorded.census() << ", " << hosts.size()
      << " of them host functions; the host step is one cudaLaunchHostFunc on the stream, "
         "between the copy of the counts and the copy of the table";
  cudaHostNodeParams student{};
  CUDA_CHECK(cudaGraphHostNodeGetParams(hosts.front(), &student));
  const cudaHostNodeParams skipped{skipped_host_step, nullptr};
  CUDA_CHECK(cudaGraphHostNodeSetParams(hosts.front(), &skipped));
  recorded.replay(stream);
  stream.synchronize();
  const auto table = [&] {
    return std::vector<float>(scratch.host_lut.data(), scratch.host_lut.data() + kLevels);
  };
  EXPECT_TRUE(course::testing::equal(
      course::testing::poison_values<float>(kLevels), table(),
      {{}, "scratch.host_lut after the recorded call ran without its host function (it was "
           "written all the same: the table must be built by the host function, on the host, "
           "not by a kernel or a copy)"}));

  student.fn(student.userData);
  EXPECT_TRUE(course::testing::equal(
      equalise_table_reference(image), table(),
      {{}, "scratch.host_lut once the test had called equalise's host function with its user "
           "data, after the counts were copied (the host function must build the table from "
           "scratch.host_block_histograms)"}));
}

TEST(EqualiseEdge, RunsOnTheGivenStream) {
  // The stream is held shut while equalise returns. A host step done at once (not as a host
  // function) reads the pinned counts before the copy filled them and writes the pinned
  // table meanwhile; a cudaStreamSynchronize before it never returns while the stream is
  // held; work on another stream writes its outputs meanwhile. Each is reported.
  const std::size_t n = 1 << 20;
  auto rng = course::testing::case_rng();
  const auto image = random_image(n, rng);
  course::testing::GuardedInput<unsigned char> pixels(image);
  auto intensities = course::testing::poisoned_output<float>(n);
  ScratchBuffers scratch;
  auto watched = scratch.watched();
  watched.push_back(course::testing::watched(intensities, "intensities"));
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { equalise(pixels.data(), intensities.data(), n, scratch.view(), s); },
      watched));
  EXPECT_TRUE(course::testing::equal(equalise_reference(image), intensities.download(),
                                     {{}, "intensities"}));
}

TEST(EqualiseEdge, RunsOnTheGivenStreamWithTwoCallsInFlight) {
  // Both calls are enqueued behind a held stream, each with its own scratch, through one
  // EqualiseScratch variable that is pointed elsewhere after each call (last at poisoned
  // decoys). A host step that reads the struct through a pointer kept by equalise, or a
  // context shared between calls (a static variable), then works on the wrong buffers or
  // the wrong count, and a result is wrong.
  auto rng = course::testing::case_rng();
  const auto first = random_image(100003, rng), second = random_image(4097, rng);
  course::DeviceBuffer<unsigned char> first_pixels(first), second_pixels(second);
  auto first_out = course::testing::poisoned_output<float>(first.size());
  auto second_out = course::testing::poisoned_output<float>(second.size());
  ScratchBuffers first_scratch, second_scratch, decoy;
  CUDA_CHECK(cudaDeviceSynchronize());
  course::Stream stream;
  bool gave_up = false;
  {
    course::StreamGate gate(stream);
    EqualiseScratch scratch = first_scratch.view();
    equalise(first_pixels.data(), first_out.data(), first.size(), scratch, stream);
    scratch = second_scratch.view();
    equalise(second_pixels.data(), second_out.data(), second.size(), scratch, stream);
    scratch = decoy.view();
    gate.open();
    gave_up = gate.gave_up();
  }
  stream.synchronize();
  EXPECT_FALSE(gave_up) << "equalise did not return while its stream was held: it waited for "
                           "work on the stream (cudaStreamSynchronize, cudaDeviceSynchronize). "
                           "Enqueue the host step with cudaLaunchHostFunc instead.";
  EXPECT_TRUE(course::testing::equal(equalise_reference(first), course::testing::device_copy(first_out.data(),
                                                                          first.size()),
                                     {{}, "intensities of the first call"}))
      << "the first call's host step must use its own context, made for that call";
  EXPECT_TRUE(course::testing::equal(equalise_reference(second), course::testing::device_copy(second_out.data(),
                                                                           second.size()),
                                     {{}, "intensities of the second call"}));
  const auto untouched = course::testing::poison_values<float>(kLevels);
  EXPECT_TRUE(course::testing::equal(
      untouched, std::vector<float>(decoy.host_lut.data(), decoy.host_lut.data() + kLevels),
      {{}, "a table no call was given (the EqualiseScratch variable pointed at it after the "
           "calls returned)"}));
}

}  // namespace
