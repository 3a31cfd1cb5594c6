#include "warp_vote.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

// Which elements the threshold keeps: none (the largest value), about half (the median), all
// (one below the smallest), or ties (values in [-3, 3] against 0: many elements equal the
// threshold, and equal is not kept).
enum class Keep { None, Half, All, Ties };

struct Input {
  std::vector<int> values;
  int threshold = 0;
};

Input make_input(std::size_t n, Keep keep, std::mt19937_64& rng) {
  Input input;
  if (keep == Keep::Ties) {
    input.values = course::random_ints(n, -3, 3, rng);
    return input;
  }
  input.values = course::random_ints(n, -1000000000, 1000000000, rng);
  if (n == 0) return input;
  auto sorted = input.values;
  std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.end());
  const auto [lo, hi] = std::minmax_element(input.values.begin(), input.values.end());
  input.threshold = keep == Keep::None ? *hi : keep == Keep::All ? *lo - 1 : sorted[n / 2];
  return input;
}

std::vector<int> kept_in_order(const Input& input) {
  std::vector<int> kept;
  for (const int v : input.values)
    if (v > input.threshold) kept.push_back(v);
  return kept;
}

// *count must be the number kept; out must hold them in input order, then still the poison up
// to n (nothing written past *count).
::testing::AssertionResult compacted(const Input& input, const std::vector<int>& out, int count,
                                     const std::string& when) {
  const std::vector<int> kept = kept_in_order(input);
  const int k = static_cast<int>(kept.size());
  const std::string at = when.empty() ? "" : " " + when;
  if (count != k) {
    return ::testing::AssertionFailure()
           << "*count" << at << " is " << count << ", expected " << k << " (the elements "
           << "greater than " << input.threshold << ")"
           << (course::is_poison(count) ? "; it still holds the poison: never written" : "");
  }
  auto expected = course::testing::poison_values<int>(out.size());
  std::copy(kept.begin(), kept.end(), expected.begin());
  auto result = course::testing::equal(
      expected, out, {{}, "out" + at + " (the kept elements, then untouched)"});
  if (!result) {
    // All there but shuffled: the compaction is not stable.
    std::vector<int> got(out.begin(), out.begin() + k), want = kept;
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    if (got == want)
      result << "\nThe kept elements are all in out[0, " << k << ") but not in the order of "
             << "the input: warps (or blocks) must take their places in input order, not in "
             << "the order they reach an atomic.";
  }
  return result;
}

void check_compaction(const Input& input, cudaStream_t stream, const std::string& when) {
  const std::size_t n = input.values.size();
  GuardedInput<int> in(input.values);
  GuardedOutput<int> out(n), count(1), scratch(compact_scratch_ints(static_cast<int>(n)));
  compact_if_greater(in.data(), static_cast<int>(n), input.threshold, out.data(), count.data(),
                     scratch.data(), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE(compacted(input, out.download(), count.download()[0], when));
  EXPECT_TRUE(out.guards_intact("out (n elements)"));
  EXPECT_TRUE(count.guards_intact("count (one int)"));
  EXPECT_TRUE(scratch.guards_intact("scratch (compact_scratch_ints(n))"));
  EXPECT_TRUE(in.unchanged("in"));
}

struct Case {
  std::size_t n;
  Keep keep;
};

class WarpVote : public ::testing::TestWithParam<Case> {};

TEST_P(WarpVote, KeepsTheGreaterElementsInOrder) {
  auto rng = course::testing::case_rng();
  check_compaction(make_input(GetParam().n, GetParam().keep, rng), nullptr, "");
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const char* const keep_names[] = {"none", "half", "all", "ties"};  // in the order of Keep
  return "n_" + std::to_string(info.param.n) + "_" +
         keep_names[static_cast<int>(info.param.keep)];
}

std::vector<Case> every_keep(const std::vector<std::size_t>& sizes) {
  std::vector<Case> cases;
  for (const std::size_t n : sizes)
    for (const Keep keep : {Keep::None, Keep::Half, Keep::All, Keep::Ties})
      cases.push_back({n, keep});
  return cases;
}

// The adversarial sizes with n = 0 and the edges of the reference solution's tile of 2048
// elements (2047, 2048, 2049, three tiles and one more); large ones past 2^20 and 2^24, where
// thousands of blocks race and only a stable order passes.
INSTANTIATE_TEST_SUITE_P(
    Small, WarpVote,
    ::testing::ValuesIn(every_keep(course::testing::small_sizes({0, 2047, 2048, 2049, 6145}))),
    case_name);
INSTANTIATE_TEST_SUITE_P(
    Large, WarpVote,
    ::testing::ValuesIn(every_keep(course::testing::large_sizes({(1 << 20) + 3, 1 << 24}))),
    case_name);

// The header's three passes never make a block wait for another. A single-pass compaction that
// does (a hand-made grid barrier between counting and scattering, blocks spinning on flags that
// later blocks set) finishes only while its whole grid is resident. The Large sizes are
// constants, enough on the GPUs they were chosen for; this size comes from the device's own
// limits: 32 ints for every thread it can hold resident, so a launcher with a block per tile of
// fewer than 32 elements per thread has more blocks than the whole GPU holds, and such a kernel
// deadlocks on every GPU, alone or beside other processes (which leave fewer blocks resident,
// never more). Its own suite keeps it out of the sanitizer's filter.
TEST(WarpVoteResidency, MoreTilesThanTheGpuHoldsAtOnce) {
  const std::size_t n = course::testing::elements_beyond_residency(32);
  auto rng = course::testing::case_rng();
  check_compaction(make_input(n, Keep::Half, rng), nullptr,
                   "for n = " + std::to_string(n) + " (32 ints for each of the " +
                       std::to_string(course::testing::resident_thread_capacity()) +
                       " threads this GPU holds at once, + 3)");
}

TEST(WarpVoteEdge, ExtremeThresholds) {
  // INT_MIN keeps every element but INT_MIN itself; INT_MAX keeps none. Code that compares
  // in[i] - threshold with 0 overflows on both.
  auto rng = course::testing::case_rng();
  Input input;
  input.values = course::random_ints(5003, INT_MIN, INT_MAX, rng);
  input.values[17] = INT_MIN;
  input.values[2500] = INT_MAX;
  for (const int threshold : {INT_MIN, INT_MAX}) {
    input.threshold = threshold;
    check_compaction(input, nullptr, "with threshold " + std::to_string(threshold));
  }
}

TEST(WarpVoteEdge, ZeroElementsWriteOnlyTheCountThenThreeWork) {
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  Input input = make_input(kCount, Keep::Half, rng);
  GuardedInput<int> in(input.values);
  GuardedOutput<int> out(kCount), count(1), scratch(compact_scratch_ints(kCount));
  compact_if_greater(in.data(), 0, input.threshold, out.data(), count.data(), scratch.data(),
                     nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  // compacted() expects the poison in all of out past the kept elements: here, all 64.
  EXPECT_TRUE(compacted(Input{{}, input.threshold}, out.download(), count.download()[0],
                        "after n = 0"));
  // The same buffers, n = 3.
  compact_if_greater(in.data(), 3, input.threshold, out.data(), count.data(), scratch.data(),
                     nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const Input first3{{input.values.begin(), input.values.begin() + 3}, input.threshold};
  EXPECT_TRUE(compacted(first3, out.download(), count.download()[0], "after n = 3"));
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_TRUE(count.guards_intact("count"));
  EXPECT_TRUE(scratch.guards_intact("scratch"));
}

TEST(WarpVoteEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the stream shut while compact_if_greater returns: work launched
  // anywhere else writes out or *count meanwhile, and waiting for the device is reported.
  const int n = 300001;
  auto rng = course::testing::case_rng();
  const Input input = make_input(n, Keep::Half, rng);
  GuardedInput<int> in(input.values);
  auto out = course::testing::poisoned_output<int>(n);
  auto count = course::testing::poisoned_output<int>(1);
  auto scratch = course::testing::poisoned_output<int>(compact_scratch_ints(n));
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) {
        compact_if_greater(in.data(), n, input.threshold, out.data(), count.data(),
                           scratch.data(), s);
      },
      {course::testing::watched(out, "out"), course::testing::watched(count, "count")}));
  EXPECT_TRUE(compacted(input, out.download(), count.download()[0], ""));
}

TEST(WarpVoteEdge, CallsAgainWithNewInputs) {
  // Same buffers, new contents and threshold; scratch keeps what the first call left there, so
  // counts that assume a zeroed scratch, or an answer remembered by pointer or by size, fail.
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> in(n), out(n), count(1), scratch(compact_scratch_ints(n));
  scratch.fill_bytes(course::kPoisonByte);
  for (const std::string call : {"first call", "second call"}) {
    const Input input = make_input(n, Keep::Half, rng);
    in.upload(input.values);
    out.fill_bytes(course::kPoisonByte);
    count.fill_bytes(course::kPoisonByte);
    compact_if_greater(in.data(), n, input.threshold, out.data(), count.data(), scratch.data(),
                       nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(compacted(input, out.download(), count.download()[0], "after the " + call));
  }
}

}  // namespace
