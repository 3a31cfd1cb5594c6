#include "single_pass_reduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

using course::testing::host_sum;

std::vector<int> random_values(std::size_t n, std::mt19937_64& rng) {
  // Full-range ints: any int accumulator overflows.
  return course::random_ints(n, INT_MIN, INT_MAX, rng);
}

// A scratch buffer between poisoned guards, zeroed once as the header asks and never again:
// the kernel's last block has to leave the counter at 0 for the next call.
class Scratch {
 public:
  Scratch() {
    course::testing::fill_device_bytes(words_.data(), 0, single_pass_scratch_bytes());
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void* data() { return words_.data(); }
  std::size_t bytes() const { return single_pass_scratch_bytes(); }
  unsigned int counter() {
    unsigned int value = 0;
    CUDA_CHECK(cudaMemcpy(&value, single_pass_counter(data()), sizeof value,
                          cudaMemcpyDeviceToHost));
    return value;
  }
  ::testing::AssertionResult guards_intact() const { return words_.guards_intact("scratch"); }

 private:
  GuardedOutput<long long> words_{single_pass_scratch_bytes() / sizeof(long long)};
};

::testing::AssertionResult sum_is(long long expected, const GuardedOutput<long long>& out,
                                  const std::string& what) {
  return course::testing::equal(std::vector<long long>{expected}, out.download(), {{}, what});
}

// One call on a fresh scratch: the sum, the guards around *out and the scratch, the input.
void check_sum(std::size_t n, std::size_t misalign) {
  auto rng = course::testing::case_rng();
  const auto values = random_values(n + misalign, rng);
  GuardedInput<int> in(values);
  GuardedOutput<long long> out(1);
  Scratch scratch;
  single_pass_reduce(in.data() + misalign, static_cast<int>(n), scratch.data(), out.data(),
                     nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(sum_is(host_sum(values, misalign), out, "sum of n = " + std::to_string(n) +
                                                          " ints"));
  EXPECT_TRUE(out.guards_intact("*out"));
  EXPECT_TRUE(scratch.guards_intact());
  EXPECT_TRUE(in.unchanged("in"));
}

class SinglePassReduce : public ::testing::TestWithParam<std::size_t> {};
TEST_P(SinglePassReduce, SumsRandomInts) { check_sum(GetParam(), 0); }

using course::testing::size_name;
INSTANTIATE_TEST_SUITE_P(Small, SinglePassReduce,
                         ::testing::ValuesIn(course::testing::small_sizes({0})), size_name);
// 2^24 ints need many times more blocks' worth of elements than any grid that fills the GPU.
INSTANTIATE_TEST_SUITE_P(Large, SinglePassReduce,
                         ::testing::ValuesIn(course::testing::large_sizes(
                             {(std::size_t{1} << 20) + 3, std::size_t{1} << 24})),
                         size_name);

// The last-block pattern waits for no other block, so it finishes whatever the grid. A kernel
// whose blocks wait for each other instead (spinning until the counter reaches gridDim.x, or
// block 0 waiting for every partial) finishes only while its whole grid is resident. The Large
// sizes are constants, enough on the GPUs they were chosen for; this size comes from the
// device's own limits: 32 ints for every thread it can hold resident, so a launcher with fewer
// than 32 elements per thread launches more blocks than the whole GPU holds (or
// kSinglePassMaxBlocks) and such a kernel deadlocks on every GPU, alone or beside other
// processes (which leave fewer blocks resident, never more). Its own suite keeps it out of the
// sanitizer's filter.
TEST(SinglePassResidency, MoreBlocksThanTheGpuHoldsAtOnce) {
  const std::size_t n = course::testing::elements_beyond_residency(32);
  SCOPED_TRACE("n = " + std::to_string(n) + ": 32 ints for each of the " +
               std::to_string(course::testing::resident_thread_capacity()) +
               " threads this GPU holds at once, + 3");
  check_sum(n, 0);
}

// A stress test of the ordering the exercise is about: each block's partial must be visible
// before its ticket is counted, or the last block adds the partial that the call before left in
// the same slot. Many calls go back to back on one stream and one scratch, no host code between
// them, each on new inputs (so every slot's old partial is wrong for the next call), for grids
// of 2 blocks up to a full GPU. On Hopper a missing or misplaced fence rarely shows here (the
// store usually reaches L2 before the atomic does; the fixtures without the fence passed 16 runs
// on an H200): the memory_fence rule is what fails such a kernel. This case catches the races
// that do show, and a counter not reset in time for a call that follows with no host code in
// between. Its own suite keeps it out of the sanitizer's filter.
TEST(SinglePassStress, EveryCallSeesTheCurrentPartials) {
  constexpr int kInputs = 16;  // distinct inputs per size, called in turn
  constexpr int kRounds = 16;  // times through them
  const int most = static_cast<int>(std::min<long long>(
      course::testing::resident_thread_capacity() + 3, (1 << 20) + 3));
  auto rng = course::testing::case_rng();
  for (const int n : {300, 4099, 65537, most}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<course::DeviceBuffer<int>> inputs;
    std::vector<long long> sums;
    for (int k = 0; k < kInputs; ++k) {
      const auto values = random_values(n, rng);
      sums.push_back(host_sum(values));
      inputs.emplace_back(values);
    }
    Scratch scratch;
    GuardedOutput<long long> out(static_cast<std::size_t>(kInputs) * kRounds);
    course::Stream stream;
    for (int call = 0; call < kInputs * kRounds; ++call)
      single_pass_reduce(inputs[call % kInputs].data(), n, scratch.data(), out.data() + call,
                         stream);
    stream.synchronize();
    std::vector<long long> expected;
    for (int call = 0; call < kInputs * kRounds; ++call) expected.push_back(sums[call % kInputs]);
    EXPECT_TRUE(course::testing::equal(expected, out.download(),
                                       {{}, "sums of " + std::to_string(kInputs * kRounds) +
                                                " calls back to back on one scratch (element k "
                                                "is call k)"}));
    EXPECT_TRUE(out.guards_intact("the calls' outputs"));
    EXPECT_EQ(scratch.counter(), 0u) << "the counter after the last call";
  }
}

TEST(SinglePassEdge, SumsFromMisalignedPointers) {
  // One to three ints past a 16-byte boundary: vector loads must not assume alignment.
  for (const std::size_t n : {1000, 65537}) {
    for (const std::size_t misalign : {1, 2, 3}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", in starts " + std::to_string(misalign) +
                   " ints past a 16-byte boundary");
      check_sum(n, misalign);
    }
  }
}

TEST(SinglePassEdge, ResetsTheCounter) {
  const int n = 100003;
  auto rng = course::testing::case_rng();
  const auto values = random_values(n, rng);
  GuardedInput<int> in(values);
  GuardedOutput<long long> out(1);
  Scratch scratch;
  single_pass_reduce(in.data(), n, scratch.data(), out.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(sum_is(host_sum(values), out, "sum"));
  EXPECT_EQ(scratch.counter(), 0u)
      << "the counter (the first 4 bytes of scratch) must read 0 after a call: the block that "
         "draws the last ticket sets it back to 0, so that the next call needs no memset";
}

TEST(SinglePassEdge, ReusesTheScratchAcrossSizes) {
  // One scratch, zeroed once, for calls of every size in turn (grids of different sizes): a
  // counter left where the last call took it gives the wrong last block from the second call on.
  auto rng = course::testing::case_rng();
  Scratch scratch;
  GuardedOutput<long long> out(1);
  int call = 0;
  for (const int n : {1000, 33, (1 << 17) + 3, 7, 0, 65, 1, 32, 257}) {
    ++call;
    const auto values = random_values(n, rng);
    GuardedInput<int> in(values);
    course::testing::fill_device_bytes(out.data(), course::kPoisonByte, sizeof(long long));
    single_pass_reduce(in.data(), n, scratch.data(), out.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(sum_is(host_sum(values), out,
                       "sum of call " + std::to_string(call) + " (n = " + std::to_string(n) +
                           ") on the scratch of the calls before"));
  }
  EXPECT_TRUE(scratch.guards_intact());
}

// Same buffers, new contents, three times: a launcher that remembers its last sum by pointer or
// by size returns an old sum, and a counter that is not reset fails the second call.
TEST(SinglePassEdge, CallsAgainWithNewInputs) {
  const int n = 123457;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> in(n);
  GuardedOutput<long long> out(1);
  Scratch scratch;
  for (const std::string call : {"first call", "second call", "third call"}) {
    const auto values = random_values(n, rng);
    in.upload(values);
    course::testing::fill_device_bytes(out.data(), course::kPoisonByte, sizeof(long long));
    single_pass_reduce(in.data(), n, scratch.data(), out.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(sum_is(host_sum(values), out, "sum after the " + call));
  }
}

// keeps_to_stream holds the stream shut while the launcher returns: a launch or a copy anywhere
// else (the default stream, a stream of its own, the host) writes *out or the partials
// meanwhile, and waiting on the stream is reported.
TEST(SinglePassEdge, RunsOnTheGivenStream) {
  const int n = (1 << 20) + 5;
  auto rng = course::testing::case_rng();
  const auto values = random_values(n, rng);
  GuardedInput<int> in(values);
  GuardedOutput<long long> out(1);
  Scratch scratch;
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { single_pass_reduce(in.data(), n, scratch.data(), out.data(), s); },
      {{out.data(), sizeof(long long), "*out"}, {scratch.data(), scratch.bytes(), "scratch"}}));
  EXPECT_TRUE(sum_is(host_sum(values), out, "sum"));
}

// The launcher's work recorded into a graph instead of run: the graph shows every operation it
// enqueued. Replaying the graph runs that one kernel again and again with no host code in
// between, which works only if the kernel itself leaves the counter at 0.
TEST(SinglePassEdge, LaunchesOneKernel) {
  const int n = (1 << 17) + 3;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> in(random_values(n, rng));
  {
    // One ordinary call on a scratch of its own first, so that one-time set-up (loading the
    // kernel, an occupancy query) happens outside the capture.
    Scratch warm_up;
    GuardedOutput<long long> sink(1);
    single_pass_reduce(in.data(), n, warm_up.data(), sink.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  GuardedOutput<long long> out(1);
  Scratch scratch;
  course::Stream stream;
  course::testing::RecordedGraph recorded(stream, [&](cudaStream_t s) {
    single_pass_reduce(in.data(), n, scratch.data(), out.data(), s);
  });
  ASSERT_TRUE(recorded.problem().empty()) << "single_pass_reduce: " << recorded.problem();
  ASSERT_TRUE(recorded.kernels() == 1 && recorded.memsets() + recorded.copies() +
                                             recorded.others() == 0)
      << "the launcher enqueued " << recorded.census()
      << " on its stream; expected exactly one kernel and nothing else: the last block writes "
         "the total (no second kernel) and resets the counter (no memset)";
  for (int replay = 1; replay <= 3; ++replay) {
    const auto values = random_values(n, rng);
    in.upload(values);
    course::testing::fill_device_bytes(out.data(), course::kPoisonByte, sizeof(long long));
    // The stream does not wait for the legacy default stream that ran the upload and memset.
    CUDA_CHECK(cudaDeviceSynchronize());
    recorded.replay(stream);
    stream.synchronize();
    EXPECT_TRUE(sum_is(host_sum(values), out,
                       "sum after replay " + std::to_string(replay) + " of the recorded kernel"));
  }
}

}  // namespace
