#include "warp_divergence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;

constexpr int kGuard = 64;

std::vector<unsigned> reference(const std::vector<unsigned>& in) {
  std::vector<unsigned> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    out[i] = i % 2 == 0 ? even_branch(in[i]) : odd_branch(in[i]);
  return out;
}

void check_branches(int n) {
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_uints(n, 0u, 0xffffffffu, rng);
  GuardedInput<unsigned> in(in_host);
  auto out = course::testing::poisoned_output<unsigned>(static_cast<std::size_t>(n) + kGuard);
  warp_uniform_branches(in.data(), out.data(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto all = out.download();
  EXPECT_TRUE(course::testing::equal(reference(in_host),
                                     std::vector<unsigned>(all.begin(), all.begin() + n),
                                     {{}, "out"}));
  EXPECT_TRUE(course::testing::equal(std::vector<unsigned>(kGuard, 0xffffffffu),
                                     std::vector<unsigned>(all.begin() + n, all.end()),
                                     {{}, "memory after out[n) (must not be written)"}));
  EXPECT_TRUE(in.unchanged("in"));
}

class WarpDivergence : public ::testing::TestWithParam<int> {};
TEST_P(WarpDivergence, MatchesTheDivergentKernel) { check_branches(GetParam()); }

std::string size_name(const ::testing::TestParamInfo<int>& info) {
  return "n_" + std::to_string(info.param);
}

// Around the 32-element warp and the 64-element pair of warps, odd sizes, primes.
INSTANTIATE_TEST_SUITE_P(Small, WarpDivergence,
                         ::testing::Values(1, 2, 7, 31, 32, 33, 63, 64, 65, 127, 129, 1000, 4097,
                                           65537),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, WarpDivergence, ::testing::Values(1000003, (1 << 22) + 7),
                         size_name);

TEST(WarpDivergenceEdge, ZeroElementsWriteNothingThenThreeWork) {
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_uints(kGuard, 0u, 0xffffffffu, rng);
  GuardedInput<unsigned> in(in_host);
  auto out = course::testing::poisoned_output<unsigned>(kGuard);
  warp_uniform_branches(in.data(), out.data(), 0, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> expected(kGuard, 0xffffffffu);
  EXPECT_TRUE(course::testing::equal(expected, out.download(), {{}, "out after n = 0"}));
  warp_uniform_branches(in.data(), out.data(), 3, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto first = reference(std::vector<unsigned>(in_host.begin(), in_host.begin() + 3));
  std::copy(first.begin(), first.end(), expected.begin());
  EXPECT_TRUE(course::testing::equal(expected, out.download(), {{}, "out after n = 3"}));
}

TEST(WarpDivergenceEdge, RunsOnTheGivenStream) {
  const int n = 300001;
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_uints(n, 0u, 0xffffffffu, rng);
  GuardedInput<unsigned> in(in_host);
  auto out = course::testing::poisoned_output<unsigned>(n);
  course::Stream stream;
  warp_uniform_branches(in.data(), out.data(), n, stream);
  stream.synchronize();
  std::vector<unsigned> got(n);
  CUDA_CHECK(cudaMemcpy(got.data(), out.data(), n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(course::testing::equal(reference(in_host), got, {{}, "out"}));
}

}  // namespace
