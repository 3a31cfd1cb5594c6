#include "barriers.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "barriers_reference.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;

// Guard elements after the output: a kernel that writes past n changes them.
constexpr int kGuard = 64;

template <class T>
std::vector<T> poison_vector(std::size_t n) {
  std::vector<T> v(n);
  std::memset(v.data(), course::kPoisonByte, n * sizeof(T));
  return v;
}

template <class T, class Launch, class Reference>
void check(int n, Launch launch, Reference reference, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(static_cast<std::size_t>(n), INT_MIN, INT_MAX, rng));
  auto out = course::testing::poisoned_output<T>(static_cast<std::size_t>(n) + kGuard);
  launch(in.data(), out.data(), n, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto all = out.download();
  EXPECT_TRUE(course::testing::equal(reference(in.host()),
                                     std::vector<T>(all.begin(), all.begin() + n),
                                     {{}, "out"}));
  EXPECT_TRUE(course::testing::equal(poison_vector<T>(kGuard),
                                     std::vector<T>(all.begin() + n, all.end()),
                                     {{}, "memory after out[n) (must not be written)"}));
  EXPECT_TRUE(in.unchanged("in"));
}

std::string size_name(const ::testing::TestParamInfo<int>& info) {
  return "n" + std::to_string(info.param);
}

// The segment sums come first: a version that deadlocks at its barrier then times out before
// any case has passed.
class BarriersSegmentSum : public ::testing::TestWithParam<int> {};

TEST_P(BarriersSegmentSum, ExactSegmentTotals) {
  check<long long>(GetParam(), barriers_segment_sum, barriers_segment_sum_reference, nullptr);
}

class BarriersRotate : public ::testing::TestWithParam<int> {};

TEST_P(BarriersRotate, EachSegmentRotatedLeftByOne) {
  check<int>(GetParam(), barriers_rotate, barriers_rotate_reference, nullptr);
}

// Segments shorter than a warp, a warp and a half, exactly one or two segments, one past a
// segment, and sizes with many blocks (a race between warps shows up somewhere among them).
// 1 is there too, though a one-element segment cannot show a missing barrier.
#define BARRIERS_SMALL_SIZES                                                                   \
  ::testing::Values(2, 31, 33, 127, 129, 255, 256, 257, 512, 1000, 4099, 65537, 1)
#define BARRIERS_LARGE_SIZES ::testing::Values((1 << 22) + 3, 10000019)

INSTANTIATE_TEST_SUITE_P(Small, BarriersSegmentSum, BARRIERS_SMALL_SIZES, size_name);
INSTANTIATE_TEST_SUITE_P(Large, BarriersSegmentSum, BARRIERS_LARGE_SIZES, size_name);
INSTANTIATE_TEST_SUITE_P(Small, BarriersRotate, BARRIERS_SMALL_SIZES, size_name);
INSTANTIATE_TEST_SUITE_P(Large, BarriersRotate, BARRIERS_LARGE_SIZES, size_name);

TEST(BarriersEdge, EmptyInputWritesNothingThenSmallWorks) {
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(kGuard, INT_MIN, INT_MAX, rng));
  auto rotated = course::testing::poisoned_output<int>(kGuard);
  auto sums = course::testing::poisoned_output<long long>(kGuard);
  barriers_rotate(in.data(), rotated.data(), 0, nullptr);
  barriers_segment_sum(in.data(), sums.data(), 0, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(poison_vector<int>(kGuard), rotated.download(),
                                     {{}, "rotate's out after n = 0"}));
  EXPECT_TRUE(course::testing::equal(poison_vector<long long>(kGuard), sums.download(),
                                     {{}, "segment_sum's out after n = 0"}));
  // Then real calls on the same buffers, so doing nothing does not pass.
  const int n = kGuard - 1;
  barriers_rotate(in.data(), rotated.data(), n, nullptr);
  barriers_segment_sum(in.data(), sums.data(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<int> used(in.host().begin(), in.host().begin() + n);
  auto want_rotated = barriers_rotate_reference(used);
  want_rotated.push_back(poison_vector<int>(1)[0]);
  auto want_sums = barriers_segment_sum_reference(used);
  want_sums.push_back(poison_vector<long long>(1)[0]);
  EXPECT_TRUE(course::testing::equal(want_rotated, rotated.download(),
                                     {{}, "rotate's out after n = 63 (the last must stay)"}));
  EXPECT_TRUE(course::testing::equal(want_sums, sums.download(),
                                     {{}, "segment_sum's out after n = 63 (the last must stay)"}));
}

TEST(BarriersEdge, RunsOnTheGivenStream) {
  course::Stream stream;
  check<long long>(100003, barriers_segment_sum, barriers_segment_sum_reference, stream);
  check<int>(100003, barriers_rotate, barriers_rotate_reference, stream);
}

}  // namespace
