#include "transpose_shared.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "course/testing.h"
#include "transpose_shared_reference.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;
using Shape = std::pair<int, int>;  // rows, cols of the input

void check_transpose(int rows, int cols, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  GuardedInput<float> in(course::random_floats(n, -1000.f, 1000.f, rng));
  GuardedOutput<float> out(n);

  transpose_shared(in.data(), out.data(), rows, cols, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EXPECT_TRUE(course::testing::equal(transpose_shared_reference(in.host(), rows, cols),
                                     out.download(),
                                     {{static_cast<std::size_t>(cols),
                                       static_cast<std::size_t>(rows)},
                                      "out (cols x rows)"}));
  EXPECT_TRUE(out.guards_intact("out (rows * cols)"));
  EXPECT_TRUE(in.unchanged("in"));
}

class TransposeShared : public ::testing::TestWithParam<Shape> {};

TEST_P(TransposeShared, MatchesReference) {
  check_transpose(GetParam().first, GetParam().second, nullptr);
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(info.param.first) + "x" + std::to_string(info.param.second);
}

// Partial tiles on every side, thin matrices (one row, one column), exact tiles, and shapes
// one above and below the 32-wide tile and a power of two.
INSTANTIATE_TEST_SUITE_P(Small, TransposeShared,
                         ::testing::Values(Shape{1, 1}, Shape{1, 7}, Shape{7, 1}, Shape{31, 33},
                                           Shape{32, 32}, Shape{33, 31}, Shape{1, 100},
                                           Shape{100, 1}, Shape{64, 96}, Shape{127, 129},
                                           Shape{255, 257}, Shape{8, 1000}),
                         shape_name);
INSTANTIATE_TEST_SUITE_P(Large, TransposeShared,
                         ::testing::Values(Shape{1025, 2047}, Shape{4096, 4096},
                                           Shape{1, (1 << 20) + 3}, Shape{(1 << 20) + 3, 1},
                                           Shape{3001, 2999}),
                         shape_name);

TEST(TransposeSharedEdge, EmptyMatrixWritesNothingThenSmallWorks) {
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  GuardedInput<float> in(course::random_floats(kCount, -10.f, 10.f, rng));
  GuardedOutput<float> out(kCount);
  transpose_shared(in.data(), out.data(), 0, 5, nullptr);
  transpose_shared(in.data(), out.data(), 5, 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(out, "out after calls with rows = 0 or cols = 0"));
  // The same buffers then take a real 3 x 5 call, so doing nothing does not pass.
  transpose_shared(in.data(), out.data(), 3, 5, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> used(in.host().begin(), in.host().begin() + 15);
  auto expected = transpose_shared_reference(used, 3, 5);
  const auto rest = course::testing::poison_values<float>(kCount - 15);
  expected.insert(expected.end(), rest.begin(), rest.end());
  EXPECT_TRUE(course::testing::equal(expected, out.download(), {{}, "out after a 3 x 5 call"}));
  EXPECT_TRUE(out.guards_intact("out after a 3 x 5 call"));
}

TEST(TransposeSharedEdge, RunsOnTheGivenStream) {
  constexpr int kRows = 1000, kCols = 777;
  auto rng = course::testing::case_rng();
  GuardedInput<float> in(course::random_floats(kRows * kCols, -1000.f, 1000.f, rng));
  GuardedOutput<float> out(kRows * kCols);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { transpose_shared(in.data(), out.data(), kRows, kCols, s); },
      {course::testing::watched(out, "out")}));
  EXPECT_TRUE(course::testing::equal(transpose_shared_reference(in.host(), kRows, kCols),
                                     out.download(), {{kCols, kRows}, "out (cols x rows)"}));
  EXPECT_TRUE(out.guards_intact("out (rows * cols)"));
}

TEST(TransposeSharedEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: a result remembered from the first call (by pointer or by
  // size) fails the second check.
  constexpr int kRows = 1000, kCols = 777;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> in(kRows * kCols);
  GuardedOutput<float> out(kRows * kCols);
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = course::random_floats(in.size(), -1000.f, 1000.f, rng);
    in.upload(in_host);
    out.repoison();
    transpose_shared(in.data(), out.data(), kRows, kCols, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(transpose_shared_reference(in_host, kRows, kCols),
                                       out.download(), {{kCols, kRows}, "out after the " + call}));
  }
  EXPECT_TRUE(out.guards_intact("out after two calls"));
}

}  // namespace
