#include "coalescing.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

// Every element the pattern covers is copied, every other one is left poisoned, and nothing
// outside the span the pattern lies in is written.
void check_pattern(int n, int offset, int stride, bool strided) {
  const std::size_t span = strided ? static_cast<std::size_t>(n) * stride
                                   : static_cast<std::size_t>(n) + offset;
  auto rng = course::testing::case_rng();
  // 64 values past the span: reading them is allowed, copying them is not.
  const auto in_host = course::random_floats(span + 64, -1e4f, 1e4f, rng);
  GuardedInput<float> in(in_host);
  GuardedOutput<float> out(span);
  if (strided) {
    strided_copy(in.data(), out.data(), n, stride, nullptr);
  } else {
    offset_copy(in.data(), out.data(), n, offset, nullptr);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  auto expected = course::testing::poison_values<float>(span);
  for (int i = 0; i < n; ++i) {
    const std::size_t j = strided ? static_cast<std::size_t>(i) * stride
                                  : static_cast<std::size_t>(offset) + i;
    expected[j] = in_host[j];
  }
  EXPECT_TRUE(course::testing::equal(expected, out.download(),
                                     {{}, strided ? "out (copied at every stride-th element, "
                                                    "untouched elsewhere)"
                                                  : "out (copied in [offset, offset + n), "
                                                    "untouched elsewhere)"}));
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_TRUE(in.unchanged("in"));
}

class OffsetCopy : public ::testing::TestWithParam<std::tuple<int, int>> {};
TEST_P(OffsetCopy, CopiesExactlyTheRange) {
  check_pattern(std::get<0>(GetParam()), std::get<1>(GetParam()), 1, false);
}
class StridedCopy : public ::testing::TestWithParam<std::tuple<int, int>> {};
TEST_P(StridedCopy, CopiesExactlyThePattern) {
  check_pattern(std::get<0>(GetParam()), 0, std::get<1>(GetParam()), true);
}

std::string name(const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
  return "n_" + std::to_string(std::get<0>(info.param)) + "_by_" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Small, OffsetCopy,
                         ::testing::Combine(::testing::Values(1, 31, 33, 1000, 4097),
                                            ::testing::Values(0, 1, 7, 31, 32, 33)),
                         name);
INSTANTIATE_TEST_SUITE_P(Large, OffsetCopy,
                         ::testing::Combine(::testing::Values(3000017, (1 << 24) + 1),
                                            ::testing::Values(0, 5)),
                         name);
INSTANTIATE_TEST_SUITE_P(Small, StridedCopy,
                         ::testing::Combine(::testing::Values(1, 31, 33, 1000, 4097),
                                            ::testing::Values(1, 2, 7, 32, 33)),
                         name);
INSTANTIATE_TEST_SUITE_P(Large, StridedCopy,
                         ::testing::Combine(::testing::Values(1000003, (1 << 20) + 1),
                                            ::testing::Values(1, 3, 32)),
                         name);

// One call of either copy, for the cases below.
struct Pattern {
  int n;
  int offset;  // offset_copy only
  int stride;  // strided_copy only
  bool strided;
};

std::size_t span_of(const Pattern& p) {
  return p.strided ? static_cast<std::size_t>(p.n) * p.stride
                   : static_cast<std::size_t>(p.n) + p.offset;
}

void run_pattern(const Pattern& p, const float* in, float* out, cudaStream_t stream) {
  if (p.strided) {
    strided_copy(in, out, p.n, p.stride, stream);
  } else {
    offset_copy(in, out, p.n, p.offset, stream);
  }
}

// in where the pattern reaches, the poison everywhere else.
std::vector<float> expected_copy(const Pattern& p, const std::vector<float>& in_host) {
  auto expected = course::testing::poison_values<float>(span_of(p));
  for (int i = 0; i < p.n; ++i) {
    const std::size_t j = p.strided ? static_cast<std::size_t>(i) * p.stride
                                    : static_cast<std::size_t>(p.offset) + i;
    expected[j] = in_host[j];
  }
  return expected;
}

// keeps_to_stream holds the stream shut while the copy returns: a launch anywhere else (the
// default stream, a stream of its own) writes out meanwhile, and waiting on the stream is
// reported.
void check_keeps_to_stream(const Pattern& p) {
  const std::size_t span = span_of(p);
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_floats(span + 64, -1e4f, 1e4f, rng);
  GuardedInput<float> in(in_host);
  GuardedOutput<float> out(span);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { run_pattern(p, in.data(), out.data(), s); },
      {{out.data(), span * sizeof(float), "out"}}));
  EXPECT_TRUE(course::testing::equal(expected_copy(p, in_host), out.download(), {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
}

// Same buffers, new contents: a copy that remembers its last answer by pointer or by size
// returns the first call's out the second time.
void check_calls_again(const Pattern& p) {
  const std::size_t span = span_of(p);
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> in(span + 64), out(span);
  for (const std::string call : {"first call", "second call"}) {
    const auto in_host = course::random_floats(span + 64, -1e4f, 1e4f, rng);
    in.upload(in_host);
    out.fill_bytes(course::kPoisonByte);
    run_pattern(p, in.data(), out.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(expected_copy(p, in_host), out.download(),
                                       {{}, "out after the " + call}));
  }
}

// RunsOnTheGivenStream and CallsAgainWithNewInputs are offset_copy's cases.
TEST(CoalescingEdge, RunsOnTheGivenStream) { check_keeps_to_stream({(1 << 20) - 3, 5, 1, false}); }
TEST(CoalescingEdge, StridedCopyRunsOnTheGivenStream) {
  check_keeps_to_stream({(1 << 18) + 1, 0, 3, true});
}
TEST(CoalescingEdge, CallsAgainWithNewInputs) { check_calls_again({100003, 7, 1, false}); }
TEST(CoalescingEdge, StridedCopyCallsAgainWithNewInputs) {
  check_calls_again({50021, 0, 2, true});
}

}  // namespace
