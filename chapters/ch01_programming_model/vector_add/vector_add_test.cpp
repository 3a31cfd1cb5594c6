#include "vector_add.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "course/testing.h"
#include "vector_add_reference.h"

namespace {

using course::DeviceBuffer;
using course::testing::GuardedInput;

// Guard elements after the output: a kernel that writes past n changes them.
constexpr int kGuard = 64;

void check_vector_add(int n, int misalign) {
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(n + misalign, -100.f, 100.f, rng);
  const auto b_host = course::random_floats(n + misalign, -100.f, 100.f, rng);
  GuardedInput<float> a(a_host), b(b_host);
  auto c = course::testing::poisoned_output<float>(n + misalign + kGuard);

  vector_add(a.data() + misalign, b.data() + misalign, c.data() + misalign, n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  const std::vector<float> a_used(a_host.begin() + misalign, a_host.end());
  const std::vector<float> b_used(b_host.begin() + misalign, b_host.end());
  const auto expected = vector_add_reference(a_used, b_used);
  const auto all = c.download();
  const std::vector<float> got(all.begin() + misalign, all.begin() + misalign + n);
  EXPECT_TRUE(course::testing::equal(expected, got, {{}, "c"}));

  std::vector<float> outside(all.begin(), all.begin() + misalign);
  outside.insert(outside.end(), all.begin() + misalign + n, all.end());
  std::vector<float> poison(outside.size());
  std::memset(poison.data(), course::kPoisonByte, poison.size() * sizeof(float));
  EXPECT_TRUE(course::testing::equal(poison, outside,
                                     {{}, "memory outside c[0..n) (must not be written)"}));
  EXPECT_TRUE(a.unchanged("a"));
  EXPECT_TRUE(b.unchanged("b"));
}

class VectorAdd : public ::testing::TestWithParam<int> {};

TEST_P(VectorAdd, MatchesReference) { check_vector_add(GetParam(), 0); }
TEST_P(VectorAdd, MatchesReferenceOnMisalignedPointers) { check_vector_add(GetParam(), 1); }

std::string size_name(const ::testing::TestParamInfo<int>& info) {
  return "n_" + std::to_string(info.param);
}

// Sizes around the warp and block boundaries, primes, and (Large) sizes that need more
// threads than a sensible grid has, so only a grid-stride loop covers them.
INSTANTIATE_TEST_SUITE_P(Small, VectorAdd,
                         ::testing::Values(1, 7, 31, 32, 33, 255, 256, 257, 1000, 65537),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, VectorAdd, ::testing::Values(1000003, (1 << 25) + 3), size_name);

TEST(VectorAddEdge, ZeroElementsWritesNothingThenFiveWork) {
  // n = 0 must launch nothing (a zero-block grid is an error) and touch nothing; the same
  // buffers then take a real call, so doing nothing at all does not pass this case.
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(kGuard, -10.f, 10.f, rng);
  const auto b_host = course::random_floats(kGuard, -10.f, 10.f, rng);
  GuardedInput<float> a(a_host), b(b_host);
  auto c = course::testing::poisoned_output<float>(kGuard);
  vector_add(a.data(), b.data(), c.data(), 0, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  auto all = c.download();
  std::vector<float> poison(all.size());
  std::memset(poison.data(), course::kPoisonByte, poison.size() * sizeof(float));
  EXPECT_TRUE(course::testing::equal(poison, all, {{}, "c after a call with n = 0"}));

  vector_add(a.data(), b.data(), c.data(), 5, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  all = c.download();
  auto expected = vector_add_reference(a_host, b_host);
  expected.resize(5);
  expected.insert(expected.end(), poison.begin() + 5, poison.end());
  EXPECT_TRUE(course::testing::equal(expected, all, {{}, "c after a call with n = 5"}));
}

TEST(VectorAddEdge, RunsOnTheGivenStream) {
  // Work must go to the stream passed in: after synchronising only that stream the result
  // has to be complete.
  const int n = 1 << 20;
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(n, -1.f, 1.f, rng);
  const auto b_host = course::random_floats(n, -1.f, 1.f, rng);
  GuardedInput<float> a(a_host), b(b_host);
  auto c = course::testing::poisoned_output<float>(n);
  course::Stream stream;
  vector_add(a.data(), b.data(), c.data(), n, stream);
  stream.synchronize();
  std::vector<float> got(n);
  CUDA_CHECK(cudaMemcpy(got.data(), c.data(), n * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(course::testing::equal(vector_add_reference(a_host, b_host), got, {{}, "c"}));
}

}  // namespace
