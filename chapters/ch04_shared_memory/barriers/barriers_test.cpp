#include "barriers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "barriers_reference.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

template <class T, class Launch, class Reference>
void check(std::size_t n, Launch launch, Reference reference, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(n, INT_MIN, INT_MAX, rng));
  GuardedOutput<T> out(n);
  launch(in.data(), out.data(), static_cast<int>(n), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE(course::testing::equal(reference(in.host()), out.download(), {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_TRUE(in.unchanged("in"));
}

using course::testing::compact_size_name;

// The segment sums come first: a version that deadlocks at its barrier then times out before
// any case has passed.
class BarriersSegmentSum : public ::testing::TestWithParam<std::size_t> {};

TEST_P(BarriersSegmentSum, ExactSegmentTotals) {
  check<long long>(GetParam(), barriers_segment_sum, barriers_segment_sum_reference, nullptr);
}

class BarriersRotate : public ::testing::TestWithParam<std::size_t> {};

TEST_P(BarriersRotate, EachSegmentRotatedLeftByOne) {
  check<int>(GetParam(), barriers_rotate, barriers_rotate_reference, nullptr);
}

// The adversarial sizes (shorter than a warp, a warp and a half, exactly one or two segments,
// one past a segment, many blocks: a race between warps shows up somewhere among them), with
// 2, 512 and 4099 added. 1 goes last: a one-element segment cannot show a missing barrier, so
// a version that deadlocks must not pass a case before it hangs.
std::vector<std::size_t> small_sizes() {
  auto sizes = course::testing::small_sizes({2, 512, 4099});
  std::rotate(sizes.begin(), sizes.begin() + 1, sizes.end());  // sorted: 1 was first
  return sizes;
}
const auto kLargeSizes = course::testing::large_sizes({(1 << 22) + 3, 10000019});

INSTANTIATE_TEST_SUITE_P(Small, BarriersSegmentSum, ::testing::ValuesIn(small_sizes()),
                         compact_size_name);
INSTANTIATE_TEST_SUITE_P(Large, BarriersSegmentSum, ::testing::ValuesIn(kLargeSizes),
                         compact_size_name);
INSTANTIATE_TEST_SUITE_P(Small, BarriersRotate, ::testing::ValuesIn(small_sizes()),
                         compact_size_name);
INSTANTIATE_TEST_SUITE_P(Large, BarriersRotate, ::testing::ValuesIn(kLargeSizes),
                         compact_size_name);

TEST(BarriersEdge, EmptyInputWritesNothingThenSmallWorks) {
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(kCount, INT_MIN, INT_MAX, rng));
  GuardedOutput<int> rotated(kCount);
  GuardedOutput<long long> sums(kCount);
  barriers_rotate(in.data(), rotated.data(), 0, nullptr);
  barriers_segment_sum(in.data(), sums.data(), 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(rotated, "rotate's out after n = 0"));
  EXPECT_TRUE(course::testing::wrote_nothing(sums, "segment_sum's out after n = 0"));
  // Then real calls on the same buffers, so doing nothing does not pass.
  const int n = kCount - 1;
  barriers_rotate(in.data(), rotated.data(), n, nullptr);
  barriers_segment_sum(in.data(), sums.data(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<int> used(in.host().begin(), in.host().begin() + n);
  auto want_rotated = barriers_rotate_reference(used);
  want_rotated.push_back(course::testing::poison_value<int>());
  auto want_sums = barriers_segment_sum_reference(used);
  want_sums.push_back(course::testing::poison_value<long long>());
  EXPECT_TRUE(course::testing::equal(want_rotated, rotated.download(),
                                     {{}, "rotate's out after n = 63 (the last must stay)"}));
  EXPECT_TRUE(course::testing::equal(want_sums, sums.download(),
                                     {{}, "segment_sum's out after n = 63 (the last must stay)"}));
  EXPECT_TRUE(rotated.guards_intact("rotate's out after n = 63"));
  EXPECT_TRUE(sums.guards_intact("segment_sum's out after n = 63"));
}

template <class T, class Launch, class Reference>
void check_keeps_to_stream(Launch launch, Reference reference, const std::string& what) {
  constexpr int n = 100003;
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(n, INT_MIN, INT_MAX, rng));
  GuardedOutput<T> out(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t stream) { launch(in.data(), out.data(), n, stream); },
      {course::testing::watched(out, what)}));
  EXPECT_TRUE(course::testing::equal(reference(in.host()), out.download(), {{}, what}));
  EXPECT_TRUE(out.guards_intact(what));
}

TEST(BarriersEdge, RunsOnTheGivenStream) {
  check_keeps_to_stream<int>(barriers_rotate, barriers_rotate_reference, "rotate's out");
}

TEST(BarriersEdge, SegmentSumRunsOnTheGivenStream) {
  check_keeps_to_stream<long long>(barriers_segment_sum, barriers_segment_sum_reference,
                                   "segment_sum's out");
}

// The same buffers refilled: a result remembered from the first call (by pointer or by
// size) fails the second check.
template <class T, class Launch, class Reference>
void check_calls_again(Launch launch, Reference reference, const std::string& what) {
  constexpr int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<int> in(n);
  GuardedOutput<T> out(n);
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = course::random_ints(n, INT_MIN, INT_MAX, rng);
    in.upload(in_host);
    out.repoison();
    launch(in.data(), out.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(reference(in_host), out.download(),
                                       {{}, what + " after the " + call}));
  }
  EXPECT_TRUE(out.guards_intact(what + " after two calls"));
}

TEST(BarriersEdge, CallsAgainWithNewInputs) {
  check_calls_again<int>(barriers_rotate, barriers_rotate_reference, "rotate's out");
}

TEST(BarriersEdge, SegmentSumCallsAgainWithNewInputs) {
  check_calls_again<long long>(barriers_segment_sum, barriers_segment_sum_reference,
                               "segment_sum's out");
}

}  // namespace
