#include "recursive_quicksort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

// The largest sort in this file, and the largest with leaf_size 1: the launch pool is sized
// for both before the first case touches the GPU (prepare_every_case).
constexpr std::size_t kLargestN = (std::size_t{1} << 22) + 1;
constexpr std::size_t kLargestLeafOneN = 4097;

// Far deeper than any sane recursion: the call must clamp it and still sort. Nothing on the
// device would stop it otherwise (the H100 ran chains of 1000 device launches).
constexpr int kFarTooDeep = 1000;

const std::string kNeverSortedHint =
    "A segment was never sorted: a device-side launch failed or was never made (check "
    "cudaGetLastError() right after each launch, on the device: a failed launch, e.g. a bad "
    "configuration, is reported nowhere else); stop recursing at the clamped max_depth and "
    "sort what remains in one block";

enum class Keys { Random, FewDistinct, AllEqual, Sorted, Reverse, OrganPipe, Extremes };

std::string name_of(Keys keys) {
  switch (keys) {
    case Keys::Random: return "random";
    case Keys::FewDistinct: return "few_distinct";
    case Keys::AllEqual: return "all_equal";
    case Keys::Sorted: return "sorted";
    case Keys::Reverse: return "reverse";
    case Keys::OrganPipe: return "organ_pipe";
    case Keys::Extremes: return "extremes";
  }
  return "?";
}

std::vector<int> make_keys(Keys keys, std::size_t n, std::mt19937_64& rng) {
  switch (keys) {
    case Keys::Random:
      return course::random_ints(n, INT_MIN, INT_MAX, rng);
    case Keys::FewDistinct:  // 16 values: long runs of equal keys
      return course::random_ints(n, -8, 7, rng);
    case Keys::AllEqual:
      return std::vector<int>(n, course::random_ints(1, INT_MIN, INT_MAX, rng)[0]);
    case Keys::Sorted:
    case Keys::Reverse: {
      auto values = course::random_ints(n, -1000000000, 1000000000, rng);
      std::sort(values.begin(), values.end());
      if (keys == Keys::Reverse) std::reverse(values.begin(), values.end());
      return values;
    }
    case Keys::OrganPipe: {  // up to the middle, then down again: every key twice
      const int base = course::random_ints(1, -1000000000, 1000000000, rng)[0];
      std::vector<int> values(n);
      for (std::size_t i = 0; i < n; ++i)
        values[i] = base + static_cast<int>(std::min(i, n - 1 - i));
      return values;
    }
    case Keys::Extremes: {  // half of them INT_MIN, INT_MAX, their neighbours, -1, 0 or 1
      const int special[] = {INT_MIN, INT_MIN + 1, -1, 0, 1, INT_MAX - 1, INT_MAX};
      auto values = course::random_ints(n, INT_MIN, INT_MAX, rng);
      const auto pick = course::random_ints(n, 0, 13, rng);
      for (std::size_t i = 0; i < n; ++i)
        if (pick[i] < 7) values[i] = special[pick[i]];
      return values;
    }
  }
  return {};
}

std::string describe(const QuicksortParams& params) {
  return "max_depth " + std::to_string(params.max_depth) + ", leaf_size " +
         std::to_string(params.leaf_size);
}

// Success when output is std::sort of input. Otherwise says where it differs, where it is
// not sorted, and what that region holds: the poison (never written), the input's keys in
// input order (copied, never sorted), the right keys in the wrong order (partitioned, never
// sorted), or keys the input does not have (the partition lost or duplicated some).
::testing::AssertionResult sorted_like_std_sort(const std::vector<int>& input,
                                                const std::vector<int>& output,
                                                const std::string& what) {
  std::vector<int> expected = input;
  std::sort(expected.begin(), expected.end());
  if (output == expected) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure();
  const std::size_t n = expected.size();
  if (output.size() != n)
    return failure << what << ": keys_out has " << output.size() << " keys, expected " << n;

  std::size_t first = 0;
  while (output[first] == expected[first]) ++first;
  std::size_t last = n - 1;
  while (output[last] == expected[last]) --last;
  std::size_t differing = 0;
  std::size_t never_written = 0;
  std::size_t first_never_written = n;
  const int poison = course::testing::poison_value<int>();  // what a key never written reads as
  for (std::size_t i = first; i <= last; ++i) {
    if (output[i] == expected[i]) continue;
    ++differing;
    if (output[i] == poison) {
      if (never_written++ == 0) first_never_written = i;
    }
  }
  failure << what << ": keys_out differs from std::sort of keys_in at " << differing << " of "
          << n << " positions, all within indices [" << first << ", " << last
          << "]; the first, index " << first << ": expected " << expected[first] << ", got "
          << output[first] << ".";
  std::size_t descent = n;
  for (std::size_t i = 0; i + 1 < n && descent == n; ++i)
    if (output[i] > output[i + 1]) descent = i;
  if (descent < n)
    failure << " keys_out is out of order from index " << descent << ": keys_out[" << descent
            << "] = " << output[descent] << " > keys_out[" << descent + 1
            << "] = " << output[descent + 1] << ".";

  std::vector<int> output_sorted = output;
  std::sort(output_sorted.begin(), output_sorted.end());
  const bool permutation = output_sorted == expected;
  if (never_written > 0)
    failure << " " << never_written << " of those positions still hold the poison pattern ("
            << poison << "): never written, the first at index " << first_never_written
            << ".";
  else if (std::equal(input.begin() + first, input.begin() + last + 1, output.begin() + first))
    failure << " Indices [" << first << ", " << last
            << "] still hold keys_in's keys in input order: copied, never sorted.";
  else if (permutation)
    failure << " keys_out holds exactly keys_in's keys, in the wrong order within [" << first
            << ", " << last << "].";
  if (!permutation && never_written == 0) {
    std::size_t k = 0;
    while (output_sorted[k] == expected[k]) ++k;
    const int value = std::min(output_sorted[k], expected[k]);
    const auto count = [value](const std::vector<int>& keys) {
      return std::upper_bound(keys.begin(), keys.end(), value) -
             std::lower_bound(keys.begin(), keys.end(), value);
    };
    failure << " keys_out is not a permutation of keys_in: the key " << value << " appears "
            << count(expected) << " times in keys_in and " << count(output_sorted)
            << " times in keys_out.";
    if (descent == n)
      failure << " Keys are lost or written twice: check that each block's ranges (one "
                 "atomicAdd per side) and the == run cover the segment exactly.";
  }
  // Keys never written, or left in an order no sort produces: some segment's sort never ran
  // (a launch that failed leaves its side in the order its partition wrote it, and the next
  // partitions' == runs over it).
  if (never_written > 0 || descent < n) failure << " " << kNeverSortedHint << ".";
  return failure;
}

// The launch pool must be sized before kernels run; the first case of a run sizes it for
// every case (an implementation keeps the largest size it was asked for), and each case
// also asks for its own, as the API says.
void prepare_every_case() {
  prepare_recursive_quicksort(kLargestN, QuicksortParams{kFarTooDeep, 4096});
  prepare_recursive_quicksort(kLargestLeafOneN, QuicksortParams{kFarTooDeep, 1});
}

// Sorts `keys` with params and checks the output, keys_in and the guards around keys_out
// and scratch (poisoned, so counters left uninitialised show up as garbage).
void check_sort(const std::vector<int>& keys, const QuicksortParams& params,
                const std::string& what) {
  const std::size_t n = keys.size();
  prepare_recursive_quicksort(n, params);
  GuardedInput<int> in(keys);
  GuardedOutput<int> out(n);
  GuardedOutput<int> scratch(quicksort_scratch_ints(n));
  course::Stream stream;
  recursive_quicksort(in.data(), out.data(), scratch.data(), n, params, stream);
  stream.synchronize();
  EXPECT_TRUE(sorted_like_std_sort(keys, out.download(), what));
  EXPECT_TRUE(in.unchanged("keys_in"));
  EXPECT_TRUE(out.guards_intact("keys_out"));
  EXPECT_TRUE(scratch.guards_intact("scratch"));
}

// Random keys with the header's default params, over the adversarial sizes.
class QuicksortRandom : public ::testing::TestWithParam<std::size_t> {};

TEST_P(QuicksortRandom, SortsLikeStdSort) {
  prepare_every_case();
  const std::size_t n = GetParam();
  auto rng = course::testing::case_rng();
  const QuicksortParams params;
  check_sort(make_keys(Keys::Random, n, rng), params,
             "random keys, n = " + std::to_string(n) + ", " + describe(params));
}

using course::testing::size_name;

INSTANTIATE_TEST_SUITE_P(Small, QuicksortRandom,
                         ::testing::ValuesIn(course::testing::small_sizes({2, 4095, 4096, 8193})),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, QuicksortRandom,
                         ::testing::ValuesIn(course::testing::large_sizes({kLargestN})),
                         size_name);

// The inputs that break naive quicksorts, and the depth and leaf limits at their edges.
struct SortCase {
  Keys keys;
  std::size_t n;
  QuicksortParams params;
};

std::string case_name(const ::testing::TestParamInfo<SortCase>& info) {
  const SortCase& c = info.param;
  const QuicksortParams defaults;
  std::string name = name_of(c.keys) + "_n_" + std::to_string(c.n);
  if (c.params.max_depth != defaults.max_depth)
    name += "_depth_" + std::to_string(c.params.max_depth);
  if (c.params.leaf_size != defaults.leaf_size)
    name += "_leaf_" + std::to_string(c.params.leaf_size);
  return name;
}

class QuicksortKeys : public ::testing::TestWithParam<SortCase> {};

TEST_P(QuicksortKeys, SortsLikeStdSort) {
  prepare_every_case();
  const SortCase& c = GetParam();
  auto rng = course::testing::case_rng();
  check_sort(make_keys(c.keys, c.n, rng), c.params,
             name_of(c.keys) + " keys, n = " + std::to_string(c.n) + ", " +
                 describe(c.params));
}

constexpr int kDepth = QuicksortParams{}.max_depth;
constexpr int kLeaf = QuicksortParams{}.leaf_size;
const Keys kEveryKind[] = {Keys::Random,  Keys::FewDistinct, Keys::AllEqual, Keys::Sorted,
                           Keys::Reverse, Keys::OrganPipe,   Keys::Extremes};

// Small enough for compute-sanitizer: every kind of input in one block (1000 keys, under the
// default leaf) and through partitions (leaf 256), then the limits: max_depth 0 (one block
// sorts everything, 4097 keys being more than a block sorts in shared memory at once), 1 and
// 2, far deeper than any sane recursion, leaf_size 1 (recursion down to single keys) and huge.
std::vector<SortCase> small_cases() {
  std::vector<SortCase> cases;
  for (Keys keys : kEveryKind) {
    cases.push_back({keys, 1000, {kDepth, kLeaf}});
    cases.push_back({keys, 4097, {kDepth, 256}});
  }
  cases.push_back({Keys::Random, 33, {0, kLeaf}});
  cases.push_back({Keys::Reverse, 4097, {0, kLeaf}});
  cases.push_back({Keys::FewDistinct, 1000, {0, 1}});
  cases.push_back({Keys::Random, 4097, {1, 64}});
  cases.push_back({Keys::OrganPipe, 4097, {1, 64}});
  cases.push_back({Keys::Random, 4097, {2, 1}});
  cases.push_back({Keys::Sorted, 4097, {kFarTooDeep, 1}});
  cases.push_back({Keys::OrganPipe, 4097, {kFarTooDeep, 1}});
  cases.push_back({Keys::Random, 2, {kDepth, 1}});
  cases.push_back({Keys::Random, 31, {kDepth, 1}});
  cases.push_back({Keys::AllEqual, 257, {kDepth, 1}});
  cases.push_back({Keys::Extremes, 1000, {kDepth, 1}});
  cases.push_back({Keys::FewDistinct, 4097, {kDepth, 1}});
  cases.push_back({Keys::Reverse, 4097, {kDepth, 1}});
  cases.push_back({Keys::Random, 4097, {kDepth, 1 << 20}});
  return cases;
}

// The default params on inputs past one leaf, and the limits on segments a block can only
// sort in global memory.
std::vector<SortCase> medium_cases() {
  std::vector<SortCase> cases;
  for (Keys keys : kEveryKind) cases.push_back({keys, 65537, {kDepth, kLeaf}});
  cases.push_back({Keys::Random, 65537, {0, kLeaf}});
  cases.push_back({Keys::OrganPipe, 65537, {1, kLeaf}});
  cases.push_back({Keys::Sorted, 65537, {2, kLeaf}});
  cases.push_back({Keys::Random, 65537, {kFarTooDeep, kLeaf}});
  cases.push_back({Keys::Reverse, 20000, {kDepth, 1 << 20}});
  return cases;
}

std::vector<SortCase> large_cases() {
  std::vector<SortCase> cases;
  for (Keys keys : kEveryKind)
    if (keys != Keys::Random) cases.push_back({keys, 1000003, {kDepth, kLeaf}});
  cases.push_back({Keys::Random, 1000003, {kFarTooDeep, kLeaf}});
  cases.push_back({Keys::OrganPipe, 1000003, {kFarTooDeep, kLeaf}});
  cases.push_back({Keys::Random, 1000003, {2, kLeaf}});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Small, QuicksortKeys, ::testing::ValuesIn(small_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Medium, QuicksortKeys, ::testing::ValuesIn(medium_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Large, QuicksortKeys, ::testing::ValuesIn(large_cases()), case_name);

TEST(QuicksortEdge, ZeroKeysWritesNothingThenFiveSort) {
  // n = 0 must launch nothing and touch nothing; the same buffers then sort 5 keys, so doing
  // nothing at all does not pass this case.
  prepare_every_case();
  constexpr std::size_t kCount = 64;
  auto rng = course::testing::case_rng();
  const auto keys = make_keys(Keys::Random, kCount, rng);
  const QuicksortParams params;
  GuardedInput<int> in(keys);
  GuardedOutput<int> out(kCount);
  GuardedOutput<int> scratch(quicksort_scratch_ints(kCount));
  course::Stream stream;
  recursive_quicksort(in.data(), out.data(), scratch.data(), 0, params, stream);
  stream.synchronize();
  const auto poison = course::testing::poison_values<int>(kCount);
  EXPECT_TRUE(course::testing::equal(poison, out.download(),
                                     {{}, "keys_out after a call with n = 0"}));

  recursive_quicksort(in.data(), out.data(), scratch.data(), 5, params, stream);
  stream.synchronize();
  auto got = out.download();
  EXPECT_TRUE(sorted_like_std_sort(std::vector<int>(keys.begin(), keys.begin() + 5),
                                   std::vector<int>(got.begin(), got.begin() + 5),
                                   "the first 5 keys, n = 5"));
  EXPECT_TRUE(course::testing::equal(std::vector<int>(poison.begin() + 5, poison.end()),
                                     std::vector<int>(got.begin() + 5, got.end()),
                                     {{}, "keys_out past n = 5 (it must stay untouched)"}));
  EXPECT_TRUE(in.unchanged("keys_in"));
  EXPECT_TRUE(out.guards_intact("keys_out"));
  EXPECT_TRUE(scratch.guards_intact("scratch"));
}

TEST(QuicksortEdge, CallsAgainWithNewInputs) {
  // Same buffers, scratch included (its counters now hold the first call's totals), new
  // contents: a sort that relies on scratch starting at zero, or remembers its last answer,
  // fails the second call.
  prepare_every_case();
  const std::size_t n = 20011;
  const QuicksortParams params{kDepth, 256};
  prepare_recursive_quicksort(n, params);
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> in(n), out(n), scratch(quicksort_scratch_ints(n));
  scratch.fill_bytes(course::kPoisonByte);
  course::Stream stream;
  for (const std::string call : {"first call", "second call"}) {
    const auto keys = make_keys(Keys::Random, n, rng);
    in.upload(keys);
    out.fill_bytes(course::kPoisonByte);
    recursive_quicksort(in.data(), out.data(), scratch.data(), n, params, stream);
    stream.synchronize();
    EXPECT_TRUE(sorted_like_std_sort(keys, out.download(), "keys_out after the " + call));
  }
}

TEST(QuicksortEdge, TheHostLaunchesOnlyTheFirstGrid) {
  // Sorted keys do not show where the recursion ran: a sort made of host launches (a bitonic
  // network, a radix sort's passes) sorts too. So the call is recorded into a graph instead
  // of run: for keys past one leaf, the host's part must be ONE kernel launch, the depth-0
  // partition (a memset of its counters or a copy may come with it), every later grid being
  // launched from the device; while the same call, run, sorts.
  prepare_every_case();
  const std::size_t n = 65537;
  const QuicksortParams params;
  prepare_recursive_quicksort(n, params);
  auto rng = course::testing::case_rng();
  const auto keys = make_keys(Keys::Random, n, rng);
  GuardedInput<int> in(keys);
  auto out = course::testing::poisoned_output<int>(n);
  auto scratch = course::testing::poisoned_output<int>(quicksort_scratch_ints(n));
  course::Stream stream;
  const auto call = [&](cudaStream_t s) {
    recursive_quicksort(in.data(), out.data(), scratch.data(), n, params, s);
  };
  // Run first, which also keeps one-time set-up (loading the kernels) out of the recording.
  call(stream);
  stream.synchronize();
  EXPECT_TRUE(sorted_like_std_sort(keys, out.download(), "keys_out of the call that was run"));

  course::testing::RecordedGraph recorded(stream, call);
  ASSERT_TRUE(recorded.problem().empty()) << "recursive_quicksort: " << recorded.problem();
  ASSERT_EQ(recorded.kernels(), 1)
      << "recursive_quicksort(n = " << n << ", " << describe(params) << ") enqueued "
      << recorded.census() << " from the host; it launches ONE grid, the partition of the "
         "whole array, and the grids that sort its sides are launched from the device";
}

TEST(QuicksortStream, RunsOnTheGivenStream) {
  // The stream is held shut while recursive_quicksort returns: a sort launched elsewhere
  // writes keys_out meanwhile, one that waits for the device never returns. The device-side
  // launches are the held grid's descendants, so they wait with it.
  prepare_every_case();
  const std::size_t n = std::size_t{1} << 20;
  const QuicksortParams params;
  prepare_recursive_quicksort(n, params);
  auto rng = course::testing::case_rng();
  const auto keys = make_keys(Keys::Random, n, rng);
  GuardedInput<int> in(keys);
  auto out = course::testing::poisoned_output<int>(n);
  course::DeviceBuffer<int> scratch(quicksort_scratch_ints(n));
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) {
        recursive_quicksort(in.data(), out.data(), scratch.data(), n, params, s);
      },
      {{out.data(), n * sizeof(int), "keys_out"}}));
  EXPECT_TRUE(sorted_like_std_sort(keys, out.download(), "keys_out"));
}

}  // namespace
