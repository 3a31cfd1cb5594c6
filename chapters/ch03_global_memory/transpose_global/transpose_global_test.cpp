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

}  // namespace
