#include "transpose_global.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;
using Shape = std::tuple<int, int>;  // nx, ny
using Transpose = void (*)(const float*, float*, int, int, cudaStream_t);

struct Variant {
  const char* name;
  Transpose run;
};
const Variant kVariants[] = {{"read_rows", transpose_read_rows},
                             {"read_columns", transpose_read_columns},
                             {"unrolled", transpose_unrolled},
                             {"diagonal", transpose_diagonal}};

void check(const Variant& v, int nx, int ny) {
  const std::size_t n = static_cast<std::size_t>(nx) * ny;
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_floats(n, -1e3f, 1e3f, rng);
  GuardedInput<float> in(in_host);
  GuardedOutput<float> out(n);
  v.run(in.data(), out.data(), nx, ny, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> expected(n);
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      expected[static_cast<std::size_t>(x) * ny + y] = in_host[static_cast<std::size_t>(y) * nx + x];
  course::CompareOptions options;
  options.shape = {static_cast<std::size_t>(nx), static_cast<std::size_t>(ny)};
  options.what = std::string("out of transpose_") + v.name + " (nx rows of ny)";
  EXPECT_TRUE(course::testing::equal(expected, out.download(), options));
  EXPECT_TRUE(out.guards_intact(std::string("out of transpose_") + v.name));
  EXPECT_TRUE(in.unchanged("in"));
}

class TransposeGlobal : public ::testing::TestWithParam<std::tuple<int, Shape>> {};
TEST_P(TransposeGlobal, MatchesReference) {
  const auto& [variant, shape] = GetParam();
  check(kVariants[variant], std::get<0>(shape), std::get<1>(shape));
}

std::string name(const ::testing::TestParamInfo<std::tuple<int, Shape>>& info) {
  const auto& [variant, shape] = info.param;
  return std::string(kVariants[variant].name) + "_" + std::to_string(std::get<0>(shape)) + "x" +
         std::to_string(std::get<1>(shape));
}

INSTANTIATE_TEST_SUITE_P(
    Small, TransposeGlobal,
    ::testing::Combine(::testing::Range(0, 4),
                       ::testing::Values(Shape{1, 1}, Shape{1, 7}, Shape{7, 1}, Shape{31, 33},
                                         Shape{32, 32}, Shape{33, 31}, Shape{100, 257},
                                         Shape{1000, 3}, Shape{3, 1000}, Shape{129, 127})),
    name);
INSTANTIATE_TEST_SUITE_P(Large, TransposeGlobal,
                         ::testing::Combine(::testing::Range(0, 4),
                                            ::testing::Values(Shape{2049, 1025},
                                                              Shape{4097, 511},
                                                              Shape{300, 9001})),
                         name);

// out[x * ny + y] = in[y * nx + x].
std::vector<float> transpose_reference(const std::vector<float>& in, int nx, int ny) {
  std::vector<float> out(in.size());
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      out[static_cast<std::size_t>(x) * ny + y] = in[static_cast<std::size_t>(y) * nx + x];
  return out;
}

course::CompareOptions transposed(int nx, int ny, const std::string& what) {
  return {{static_cast<std::size_t>(nx), static_cast<std::size_t>(ny)}, what};
}

// keeps_to_stream holds the stream shut while the transpose returns: a launch anywhere else
// (the default stream, a stream of its own) writes out meanwhile, and waiting on the stream
// is reported.
void check_keeps_to_stream(const Variant& v) {
  const int nx = 1025, ny = 769;
  const std::size_t n = static_cast<std::size_t>(nx) * ny;
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_floats(n, -1e3f, 1e3f, rng);
  GuardedInput<float> in(in_host);
  GuardedOutput<float> out(n);
  const std::string name = std::string("out of transpose_") + v.name;
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { v.run(in.data(), out.data(), nx, ny, s); },
      {{out.data(), n * sizeof(float), name}}));
  EXPECT_TRUE(course::testing::equal(transpose_reference(in_host, nx, ny), out.download(),
                                     transposed(nx, ny, name + " (nx rows of ny)")));
  EXPECT_TRUE(out.guards_intact(name));
}

// Same buffers, new contents: a transpose that remembers its last answer by pointer or by
// shape returns the first call's out the second time.
void check_calls_again(const Variant& v) {
  const int nx = 301, ny = 333;
  const std::size_t n = static_cast<std::size_t>(nx) * ny;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> in(n), out(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto in_host = course::random_floats(n, -1e3f, 1e3f, rng);
    in.upload(in_host);
    out.fill_bytes(course::kPoisonByte);
    v.run(in.data(), out.data(), nx, ny, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(
        transpose_reference(in_host, nx, ny), out.download(),
        transposed(nx, ny, std::string("out of transpose_") + v.name + " after the " + call)));
  }
}

// RunsOnTheGivenStream and CallsAgainWithNewInputs are transpose_read_rows's cases.
TEST(TransposeGlobalEdge, RunsOnTheGivenStream) { check_keeps_to_stream(kVariants[0]); }
TEST(TransposeGlobalEdge, ReadColumnsRunsOnTheGivenStream) {
  check_keeps_to_stream(kVariants[1]);
}
TEST(TransposeGlobalEdge, UnrolledRunsOnTheGivenStream) { check_keeps_to_stream(kVariants[2]); }
TEST(TransposeGlobalEdge, DiagonalRunsOnTheGivenStream) { check_keeps_to_stream(kVariants[3]); }
TEST(TransposeGlobalEdge, CallsAgainWithNewInputs) { check_calls_again(kVariants[0]); }
TEST(TransposeGlobalEdge, ReadColumnsCallsAgainWithNewInputs) { check_calls_again(kVariants[1]); }
TEST(TransposeGlobalEdge, UnrolledCallsAgainWithNewInputs) { check_calls_again(kVariants[2]); }
TEST(TransposeGlobalEdge, DiagonalCallsAgainWithNewInputs) { check_calls_again(kVariants[3]); }

}  // namespace
