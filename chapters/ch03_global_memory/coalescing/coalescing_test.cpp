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

}  // namespace
