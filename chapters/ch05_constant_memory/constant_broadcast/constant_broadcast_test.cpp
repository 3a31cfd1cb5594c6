#include "constant_broadcast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "constant_broadcast_reference.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

// A kernel that follows the header's order matches bit for bit; another order of the same
// operations stays within a few 1e-7. A wrong segment, a stale coefficient or a clamp in the
// wrong place moves y by about the size of a coefficient (up to 1).
constexpr course::Tolerance kTolerance{1e-5, 1e-5};

// Evaluates `x` on the device with the curve last set (which must be `curve`) and checks y
// against the reference, the guards around y, and that x is unchanged.
void check_curve(const ConstantBroadcastCurve& curve, const std::vector<float>& x,
                 cudaStream_t stream, const std::string& what) {
  GuardedInput<float> in(x);
  GuardedOutput<float> out(x.size());
  constant_broadcast(in.data(), out.data(), static_cast<int>(x.size()), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EXPECT_TRUE(course::testing::close(constant_broadcast_reference(curve, x), out.download(),
                                     kTolerance, {{}, what}));
  EXPECT_TRUE(out.guards_intact(what));
  EXPECT_TRUE(in.unchanged("x"));
}

// n values of x spread over [0, 1): about 30 different segments per warp.
void check_random(std::size_t n, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  const auto curve = constant_broadcast_random_curve(rng);
  constant_broadcast_set_curve(curve);
  check_curve(curve, course::random_floats(n, 0.0f, 1.0f, rng), stream, "y");
}

class ConstantBroadcast : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ConstantBroadcast, MatchesReference) { check_random(GetParam(), nullptr); }

using course::testing::compact_size_name;

// Around a warp, a block and the 256 segments, and past any sensible grid (grid-stride loops).
INSTANTIATE_TEST_SUITE_P(Small, ConstantBroadcast,
                         ::testing::ValuesIn(course::testing::small_sizes({2, 511, 8191})),
                         compact_size_name);
INSTANTIATE_TEST_SUITE_P(Large, ConstantBroadcast,
                         ::testing::ValuesIn(course::testing::large_sizes({(1u << 24) + 3})),
                         compact_size_name);

// For every segment: its first value (t = 0), its last float (t just below 1) and one inside;
// then values outside [0, 1), where the end segments extend (t < 0 or t >= 1). Shuffled, so
// every warp mixes segments.
std::vector<float> segment_edges(std::mt19937_64& rng) {
  constexpr float kWidth = 1.0f / kConstantBroadcastSegments;
  std::uniform_real_distribution<float> inside(0.0f, 1.0f);
  std::vector<float> x;
  for (int s = 0; s < kConstantBroadcastSegments; ++s) {
    const float first = s * kWidth;
    const float next = (s + 1) * kWidth;
    x.push_back(first);
    x.push_back(std::nextafter(next, 0.0f));
    x.push_back(std::min(first + inside(rng) * kWidth, std::nextafter(next, 0.0f)));
  }
  // A few widths out at most: far out, t^3 dwarfs the result and rounding with it.
  for (const float outside : {-4.0f * kWidth, -0.5f * kWidth, -0.0f, 1.0f,
                              1.0f + 0.5f * kWidth, 1.0f + 4.0f * kWidth})
    x.push_back(outside);
  std::shuffle(x.begin(), x.end(), rng);
  return x;
}

TEST(ConstantBroadcastEdge, EverySegmentAtItsEdgesAndOutsideTheRange) {
  auto rng = course::testing::case_rng();
  const auto curve = constant_broadcast_random_curve(rng);
  const auto x = segment_edges(rng);
  // The case is only as good as its coverage: every segment must be hit.
  std::vector<int> hits(kConstantBroadcastSegments, 0);
  for (const float v : x) ++hits[constant_broadcast_segment_of(v)];
  ASSERT_EQ(std::count(hits.begin(), hits.end(), 0), 0) << "the test misses a segment";

  constant_broadcast_set_curve(curve);
  check_curve(curve, x, nullptr, "y at segment edges (x shuffled)");
}

// A new curve must be used by the next call: a kernel or launcher that copied the first
// curve once and kept it fails here, whichever part it kept.
TEST(ConstantBroadcastEdge, EachNewCurveIsUsedByTheNextCall) {
  auto rng = course::testing::case_rng();
  const auto x = course::random_floats(4099, 0.0f, 1.0f, rng);
  const auto first = constant_broadcast_random_curve(rng);
  const auto other = constant_broadcast_random_curve(rng);
  auto new_segments = first;
  std::copy(&other.segments[0][0], &other.segments[0][0] + 4 * kConstantBroadcastSegments,
            &new_segments.segments[0][0]);
  auto new_polynomial = first;
  std::copy(other.polynomial, other.polynomial + kConstantBroadcastTerms,
            new_polynomial.polynomial);

  constant_broadcast_set_curve(first);
  check_curve(first, x, nullptr, "y with the first curve");
  constant_broadcast_set_curve(new_segments);
  check_curve(new_segments, x, nullptr, "y after a set_curve that changed only the segments");
  constant_broadcast_set_curve(new_polynomial);
  check_curve(new_polynomial, x, nullptr,
              "y after a set_curve that changed only the polynomial (segments as at first)");
}

TEST(ConstantBroadcastEdge, EmptyInputWritesNothingThenSmallWorks) {
  auto rng = course::testing::case_rng();
  constexpr int kCount = 64;
  const auto curve = constant_broadcast_random_curve(rng);
  constant_broadcast_set_curve(curve);
  GuardedInput<float> in(course::random_floats(kCount, 0.0f, 1.0f, rng));
  GuardedOutput<float> out(kCount);
  constant_broadcast(in.data(), out.data(), 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(out, "y after a call with n = 0"));
  // The same buffers then take a real n = 10 call, so doing nothing does not pass.
  constant_broadcast(in.data(), out.data(), 10, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto all = out.download();
  const std::vector<float> used(in.host().begin(), in.host().begin() + 10);
  EXPECT_TRUE(course::testing::close(constant_broadcast_reference(curve, used),
                                     std::vector<float>(all.begin(), all.begin() + 10),
                                     kTolerance, {{}, "y after an n = 10 call"}));
  EXPECT_TRUE(
      course::testing::poison_after(all, 10, "memory after y[10) (must not be written)"));
  EXPECT_TRUE(out.guards_intact("y after an n = 10 call"));
}

TEST(ConstantBroadcastEdge, RunsOnTheGivenStream) {
  constexpr int n = 100003;
  auto rng = course::testing::case_rng();
  const auto curve = constant_broadcast_random_curve(rng);
  constant_broadcast_set_curve(curve);
  GuardedInput<float> in(course::random_floats(n, 0.0f, 1.0f, rng));
  GuardedOutput<float> out(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { constant_broadcast(in.data(), out.data(), n, s); },
      {course::testing::watched(out, "y")}));
  EXPECT_TRUE(course::testing::close(constant_broadcast_reference(curve, in.host()),
                                     out.download(), kTolerance, {{}, "y"}));
  EXPECT_TRUE(out.guards_intact("y"));
}

TEST(ConstantBroadcastEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled, with the same curve: a result remembered from the first call
  // (by pointer or by size) fails the second check.
  constexpr int n = 100003;
  auto rng = course::testing::case_rng();
  const auto curve = constant_broadcast_random_curve(rng);
  constant_broadcast_set_curve(curve);
  course::DeviceBuffer<float> in(n);
  GuardedOutput<float> out(n);
  for (const std::string call : {"first call", "second call, x refilled"}) {
    const auto x = course::random_floats(n, 0.0f, 1.0f, rng);
    in.upload(x);
    out.repoison();
    constant_broadcast(in.data(), out.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::close(constant_broadcast_reference(curve, x), out.download(),
                                       kTolerance, {{}, "y after the " + call}));
  }
  EXPECT_TRUE(out.guards_intact("y after two calls"));
}

}  // namespace
