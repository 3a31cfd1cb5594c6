#include "warp_divergence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

std::vector<unsigned> reference(const std::vector<unsigned>& in) {
  std::vector<unsigned> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    out[i] = i % 2 == 0 ? even_branch(in[i]) : odd_branch(in[i]);
  return out;
}

void check_branches(std::size_t n) {
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_uints(n, 0u, 0xffffffffu, rng);
  GuardedInput<unsigned> in(in_host);
  GuardedOutput<unsigned> out(n);
  warp_uniform_branches(in.data(), out.data(), static_cast<int>(n), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(reference(in_host), out.download(), {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_TRUE(in.unchanged("in"));
}

class WarpDivergence : public ::testing::TestWithParam<std::size_t> {};
TEST_P(WarpDivergence, MatchesTheDivergentKernel) { check_branches(GetParam()); }

using course::testing::size_name;

// The adversarial sizes, with the 64-element pair of warps' edges (2, 63, 64) added.
INSTANTIATE_TEST_SUITE_P(Small, WarpDivergence,
                         ::testing::ValuesIn(course::testing::small_sizes({2, 63, 64})),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, WarpDivergence,
                         ::testing::ValuesIn(course::testing::large_sizes({(1 << 22) + 7})),
                         size_name);

TEST(WarpDivergenceEdge, ZeroElementsWriteNothingThenThreeWork) {
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_uints(kCount, 0u, 0xffffffffu, rng);
  GuardedInput<unsigned> in(in_host);
  GuardedOutput<unsigned> out(kCount);
  warp_uniform_branches(in.data(), out.data(), 0, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  auto expected = course::testing::poison_values<unsigned>(kCount);
  EXPECT_TRUE(course::testing::equal(expected, out.download(), {{}, "out after n = 0"}));
  EXPECT_TRUE(out.guards_intact("out after n = 0"));
  warp_uniform_branches(in.data(), out.data(), 3, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto first = reference(std::vector<unsigned>(in_host.begin(), in_host.begin() + 3));
  std::copy(first.begin(), first.end(), expected.begin());
  EXPECT_TRUE(course::testing::equal(expected, out.download(), {{}, "out after n = 3"}));
  EXPECT_TRUE(out.guards_intact("out after n = 3"));
}

TEST(WarpDivergenceEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the stream shut while warp_uniform_branches returns: a launch
  // anywhere else (the default stream, a stream of its own) writes out meanwhile, and waiting
  // on the stream is reported.
  const int n = 300001;
  auto rng = course::testing::case_rng();
  const auto in_host = course::random_uints(n, 0u, 0xffffffffu, rng);
  GuardedInput<unsigned> in(in_host);
  auto out = course::testing::poisoned_output<unsigned>(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { warp_uniform_branches(in.data(), out.data(), n, s); },
      {{out.data(), n * sizeof(unsigned), "out"}}));
  EXPECT_TRUE(course::testing::equal(reference(in_host), out.download(), {{}, "out"}));
}

TEST(WarpDivergenceEdge, CallsAgainWithNewInputs) {
  // Same buffers, new contents: a launcher that remembers its last answer by pointer or by
  // size returns the first call's out the second time.
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<unsigned> in(n), out(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto in_host = course::random_uints(n, 0u, 0xffffffffu, rng);
    in.upload(in_host);
    out.fill_bytes(course::kPoisonByte);
    warp_uniform_branches(in.data(), out.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(reference(in_host), out.download(),
                                       {{}, "out after the " + call}));
  }
}

}  // namespace
