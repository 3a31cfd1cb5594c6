#include "matrix_sum_2d.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

void check_matrix_sum(int nx, int ny) {
  const std::size_t count = static_cast<std::size_t>(nx) * ny;
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(count, -100.f, 100.f, rng);
  const auto b_host = course::random_floats(count, -100.f, 100.f, rng);
  GuardedInput<float> a(a_host), b(b_host);
  GuardedOutput<float> c(count);

  matrix_sum_2d(a.data(), b.data(), c.data(), nx, ny, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<float> expected(count);
  for (std::size_t i = 0; i < count; ++i) expected[i] = a_host[i] + b_host[i];
  course::CompareOptions options;
  options.shape = {static_cast<std::size_t>(ny), static_cast<std::size_t>(nx)};
  options.what = "c (coordinates are [iy, ix])";
  EXPECT_TRUE(course::testing::equal(expected, c.download(), options));
  EXPECT_TRUE(c.guards_intact("c (ny * nx)"));
  EXPECT_TRUE(a.unchanged("a"));
  EXPECT_TRUE(b.unchanged("b"));
}

using Shape = std::tuple<int, int>;  // nx, ny
class MatrixSum2d : public ::testing::TestWithParam<Shape> {};

TEST_P(MatrixSum2d, MatchesReference) {
  check_matrix_sum(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return "nx_" + std::to_string(std::get<0>(info.param)) + "_ny_" +
         std::to_string(std::get<1>(info.param));
}

// Single rows and columns, sides around 32 and around typical block sides, primes.
INSTANTIATE_TEST_SUITE_P(Small, MatrixSum2d,
                         ::testing::Values(Shape{1, 1}, Shape{7, 3}, Shape{31, 33}, Shape{32, 32},
                                           Shape{33, 31}, Shape{1, 1000}, Shape{1000, 1},
                                           Shape{257, 129}, Shape{1023, 17}, Shape{100, 1025},
                                           Shape{509, 251}),
                         shape_name);
// Large: a big square that is not a multiple of anything convenient, a single column of more
// rows than 65535 blocks of 32 rows can cover, and a single very long row.
INSTANTIATE_TEST_SUITE_P(Large, MatrixSum2d,
                         ::testing::Values(Shape{4097, 2049}, Shape{1, (1 << 21) + 3},
                                           Shape{3, 700001}, Shape{(1 << 22) + 1, 1}),
                         shape_name);

TEST(MatrixSum2dEdge, EmptyMatricesWriteNothingThenASmallOneWorks) {
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(kCount, -10.f, 10.f, rng);
  const auto b_host = course::random_floats(kCount, -10.f, 10.f, rng);
  GuardedInput<float> a(a_host), b(b_host);
  GuardedOutput<float> c(kCount);
  matrix_sum_2d(a.data(), b.data(), c.data(), 0, 5, nullptr);
  matrix_sum_2d(a.data(), b.data(), c.data(), 5, 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(c, "c after nx = 0 or ny = 0"));
  const auto poison = course::testing::poison_values<float>(kCount);
  matrix_sum_2d(a.data(), b.data(), c.data(), 3, 2, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> expected = poison;
  for (int i = 0; i < 6; ++i) expected[i] = a_host[i] + b_host[i];
  EXPECT_TRUE(course::testing::equal(expected, c.download(), {{}, "c after nx = 3, ny = 2"}));
  EXPECT_TRUE(c.guards_intact("c after nx = 3, ny = 2"));
}

std::vector<float> sum_reference(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
  return c;
}

TEST(MatrixSum2dEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the stream shut while matrix_sum_2d returns: a launch anywhere else
  // (the default stream, a stream of its own) writes c meanwhile, and waiting on the stream is
  // reported.
  const int nx = 1000, ny = 1001;
  const std::size_t count = static_cast<std::size_t>(nx) * ny;
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(count, -1.f, 1.f, rng);
  const auto b_host = course::random_floats(count, -1.f, 1.f, rng);
  GuardedInput<float> a(a_host), b(b_host);
  auto c = course::testing::poisoned_output<float>(count);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { matrix_sum_2d(a.data(), b.data(), c.data(), nx, ny, s); },
      {{c.data(), count * sizeof(float), "c"}}));
  EXPECT_TRUE(course::testing::equal(sum_reference(a_host, b_host), c.download(), {{}, "c"}));
}

// The launch recorded into a graph instead of run: the exercise is the 2D grid of 2D blocks,
// and a 1D launch over the flattened matrix gives the same c at the same speed. One ordinary
// call first loads the kernel outside the recording.
TEST(MatrixSum2dEdge, LaunchesA2dGridOf2dBlocks) {
  const int nx = 1000, ny = 1001;
  const std::size_t count = static_cast<std::size_t>(nx) * ny;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> a(course::random_floats(count, -1.f, 1.f, rng));
  course::DeviceBuffer<float> b(course::random_floats(count, -1.f, 1.f, rng));
  course::DeviceBuffer<float> c(count);
  course::Stream stream;
  matrix_sum_2d(a.data(), b.data(), c.data(), nx, ny, stream);
  stream.synchronize();
  course::testing::RecordedGraph recorded(
      stream, [&](cudaStream_t s) { matrix_sum_2d(a.data(), b.data(), c.data(), nx, ny, s); });
  ASSERT_TRUE(recorded.problem().empty()) << "matrix_sum_2d: " << recorded.problem();
  ASSERT_GE(recorded.kernels(), 1) << "matrix_sum_2d launched no kernel; found "
                                   << recorded.census();
  for (const auto& launch : recorded.launches()) {
    EXPECT_TRUE(launch.grid.x > 1 && launch.grid.y > 1 && launch.block.x > 1 &&
                launch.block.y > 1)
        << "on a " << ny << " x " << nx << " matrix, expected a 2D grid of 2D blocks (more "
        << "than one block and more than one thread along both x and y); found "
        << course::testing::describe(launch);
  }
}

TEST(MatrixSum2dEdge, CallsAgainWithNewInputs) {
  // Same buffers, new contents: a launcher that remembers its last answer by pointer or by
  // shape returns the first call's c the second time.
  const int nx = 509, ny = 257;
  const std::size_t count = static_cast<std::size_t>(nx) * ny;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> a(count), b(count), c(count);
  for (const std::string call : {"first call", "second call"}) {
    const auto a_host = course::random_floats(count, -100.f, 100.f, rng);
    const auto b_host = course::random_floats(count, -100.f, 100.f, rng);
    a.upload(a_host);
    b.upload(b_host);
    c.fill_bytes(course::kPoisonByte);
    matrix_sum_2d(a.data(), b.data(), c.data(), nx, ny, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(sum_reference(a_host, b_host), c.download(),
                                       {{}, "c after the " + call}));
  }
}

}  // namespace
