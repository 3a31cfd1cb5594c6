// GoogleTest cases for recursive_reduce: exact sums of full-range ints for sizes that take one
// level (a single block) up to three or four, for common tile sizes, the edge sizes, and the
// contract around the call (input untouched, nothing written past scratch or *result, the work
// on the given stream, new inputs in the same buffers).
//
// A sum is checked exactly; the message says what a wrong one probably means: an unwritten
// *result (a device launch failed, or no level of one block ran) or a level that read partial
// sums before the blocks writing them had finished (the next level launched fire-and-forget
// or into the default stream instead of as a tail launch).
#include "recursive_reduce.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::DeviceBuffer;
using course::testing::GuardedInput;

constexpr std::size_t kGuard = 16;  // poisoned long longs after scratch and after *result

using course::testing::host_sum;
using course::testing::poison_value;

// Success when got == expected; otherwise what the wrong sum probably means.
::testing::AssertionResult sum_matches(long long expected, long long got, std::size_t n) {
  if (got == expected) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure()
                 << "sum of n = " << n << " ints: expected " << expected << ", got " << got;
  if (got == poison_value<long long>())
    return failure << " (*result still holds the poison: nothing wrote it). No level of one "
                      "block ran: a launch from the device probably failed (check "
                      "cudaGetLastError() right after it, on the device), or the levels stop "
                      "before the one that writes *result; for n = 0 the host writes 0";
  return failure << ". If small sizes pass and sizes that need several levels fail, a level "
                    "probably read partial sums before the blocks that write them had "
                    "finished: launch the next level with <<<..., cudaStreamTailLaunch>>> from "
                    "one thread (a tail launch starts after the whole grid is done), not "
                    "fire-and-forget or into the default stream, which may start it at once. "
                    "Otherwise check that every level's partials have their own place in "
                    "scratch (a level must not overwrite the partials it reads) and that each "
                    "block adds into a long long";
}

// Runs recursive_reduce on in[misalign .. misalign + n) of seeded ints in [lo, hi] with
// poisoned scratch and *result, and checks the sum, the guards after both and the input.
void check_reduce(std::size_t n, std::size_t misalign, int lo, int hi) {
  auto rng = course::testing::case_rng();
  const auto values = course::random_ints(n + misalign, lo, hi, rng);
  GuardedInput<int> in(values);
  const std::size_t capacity = recursive_reduce_scratch_size(n);
  auto scratch = course::testing::poisoned_output<long long>(capacity + kGuard);
  auto result = course::testing::poisoned_output<long long>(1 + kGuard);

  recursive_reduce(in.data() + misalign, scratch.data(), n, result.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  const auto got = result.download();
  EXPECT_TRUE(sum_matches(host_sum(values, misalign), got[0], n));
  EXPECT_TRUE(
      course::testing::poison_after(got, 1, "memory after *result (must not be written)"));
  const auto after_scratch = scratch.download();
  EXPECT_TRUE(course::testing::poison_after(
      after_scratch, capacity,
      "memory after scratch[recursive_reduce_scratch_size(n)) (must not be written: "
      "store each level's partials right after the previous level's)"));
  EXPECT_TRUE(in.unchanged("in"));
}

class RecursiveReduce : public ::testing::TestWithParam<std::size_t> {};

TEST_P(RecursiveReduce, SumsRandomInts) { check_reduce(GetParam(), 0, INT_MIN, INT_MAX); }

TEST_P(RecursiveReduce, SumsFromAMisalignedPointer) {
  // One to three ints past a 16-byte boundary: vector loads must not assume alignment.
  const std::size_t n = GetParam();
  check_reduce(n, 1 + n % 3, INT_MIN, INT_MAX);
}

using course::testing::size_name;

// Around tiles of 256, 1024 and 2048 values (one level: a single block; two levels: the
// partials of a few blocks) and their squares (65536 = 256^2, 4194304 = 2048^2: where a third
// level starts), sizes that divide no tile, and 2^24 + 7 (the benchmark's size, plus a tail).
INSTANTIATE_TEST_SUITE_P(Small, RecursiveReduce,
                         ::testing::ValuesIn(course::testing::small_sizes(
                             {2047, 2048, 2049, 8191, 8193, 65535, 65536})),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, RecursiveReduce,
                         ::testing::ValuesIn(course::testing::large_sizes(
                             {(1u << 20) + 1, (1u << 22) + 1, (1u << 24) + 7, (1u << 25) + 3})),
                         size_name);

TEST(RecursiveReduceEdge, ZeroElementsWriteZero) {
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(4, INT_MIN, INT_MAX, rng));
  auto scratch = course::testing::poisoned_output<long long>(recursive_reduce_scratch_size(0));
  auto result = course::testing::poisoned_output<long long>(1);
  recursive_reduce(in.data(), scratch.data(), 0, result.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(sum_matches(0, result.download()[0], 0));
  EXPECT_TRUE(in.unchanged("in"));
}

TEST(RecursiveReduceEdge, LargeValuesNeedALongLongEverywhere) {
  // Every value is above 2^30 (then below -2^30), so any two of them overflow an int: the
  // partial sums of every level must be long longs from the first addition on.
  for (const std::size_t n : {std::size_t{3000}, std::size_t{70001}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    check_reduce(n, 0, (1 << 30) + 1, INT_MAX);
    check_reduce(n, 0, INT_MIN, -(1 << 30) - 1);
  }
}

TEST(RecursiveReduceEdge, CallsAgainWithNewInputs) {
  // The same buffers, new contents, scratch left as the first call left it: a launcher that
  // remembers its sum by pointer or size, or a level that adds to what scratch held, fails.
  const std::size_t n = 123457;
  auto rng = course::testing::case_rng();
  DeviceBuffer<int> in(n);
  auto scratch = course::testing::poisoned_output<long long>(recursive_reduce_scratch_size(n));
  auto result = course::testing::poisoned_output<long long>(1);
  for (const std::string call : {"first call", "second call", "third call"}) {
    SCOPED_TRACE(call);
    const auto values = course::random_ints(n, INT_MIN, INT_MAX, rng);
    in.upload(values);
    result.fill_bytes(course::kPoisonByte);
    recursive_reduce(in.data(), scratch.data(), n, result.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(sum_matches(host_sum(values, 0), result.download()[0], n));
  }
}

TEST(RecursiveReduceEdge, TheHostLaunchesOnlyLevelZero) {
  // A right sum does not show who launched the levels: chapter 02's two-pass reduction, both
  // passes launched from the host, or one pass that adds every block's sum into a zeroed
  // *result, gets it too. So the call is recorded into a graph instead of run: for n that
  // needs several levels, the host's part must be level 0 alone, ONE kernel launch and
  // nothing else: every later level is launched from the device, and the level of one block
  // writes *result, so nothing needs zeroing; while the same call, run, sums right.
  const std::size_t n = (std::size_t{1} << 22) + 3;
  auto rng = course::testing::case_rng();
  const auto values = course::random_ints(n, INT_MIN, INT_MAX, rng);
  GuardedInput<int> in(values);
  auto scratch = course::testing::poisoned_output<long long>(recursive_reduce_scratch_size(n));
  auto result = course::testing::poisoned_output<long long>(1);
  course::Stream stream;
  const auto call = [&](cudaStream_t s) {
    recursive_reduce(in.data(), scratch.data(), n, result.data(), s);
  };
  // Run first, which also keeps one-time set-up (loading the kernels) out of the recording.
  call(stream);
  stream.synchronize();
  EXPECT_TRUE(sum_matches(host_sum(values, 0), result.download()[0], n));

  course::testing::RecordedGraph recorded(stream, call);
  ASSERT_TRUE(recorded.problem().empty()) << "recursive_reduce: " << recorded.problem();
  EXPECT_TRUE(recorded.kernels() == 1 && recorded.memsets() == 0 && recorded.copies() == 0 &&
              recorded.others() == 0)
      << "recursive_reduce(n = " << n << ") enqueued " << recorded.census()
      << " from the host; it launches level 0 and nothing else: one thread of each level "
         "launches the next from the device (cudaStreamTailLaunch), and the level of one "
         "block writes *result";
}

TEST(RecursiveReduceEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the stream shut while the launcher returns: a launch or a copy
  // anywhere else (the default stream, a stream of its own, a synchronous cudaMemcpy) writes
  // scratch or *result meanwhile, and waiting for the device never returns. Afterwards only
  // that stream is synchronised: the host sees level 0 complete only when every level it
  // launched is, so the sum must be there.
  const std::size_t n = (1u << 20) + 5;
  auto rng = course::testing::case_rng();
  const auto values = course::random_ints(n, INT_MIN, INT_MAX, rng);
  GuardedInput<int> in(values);
  const std::size_t capacity = recursive_reduce_scratch_size(n);
  auto scratch = course::testing::poisoned_output<long long>(capacity);
  auto result = course::testing::poisoned_output<long long>(1);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { recursive_reduce(in.data(), scratch.data(), n, result.data(), s); },
      {{scratch.data(), capacity * sizeof(long long), "scratch"},
       {result.data(), sizeof(long long), "*result"}}));
  EXPECT_TRUE(sum_matches(host_sum(values, 0), result.download()[0], n));
}

}  // namespace
