#include "vector_add.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "course/testing.h"
#include "vector_add_check.h"
#include "vector_add_reference.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

class VectorAdd : public ::testing::TestWithParam<std::size_t> {};

TEST_P(VectorAdd, MatchesReference) { check_vector_add(GetParam(), 0, 100.f); }
TEST_P(VectorAdd, MatchesReferenceOnMisalignedPointers) { check_vector_add(GetParam(), 1, 100.f); }

using course::testing::size_name;

// The adversarial sizes (warp and block boundaries, primes), and (Large) sizes that need more
// threads than a sensible grid has, so only a grid-stride loop covers them.
INSTANTIATE_TEST_SUITE_P(Small, VectorAdd, ::testing::ValuesIn(course::testing::small_sizes()),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, VectorAdd,
                         ::testing::ValuesIn(course::testing::large_sizes({(1 << 25) + 3})),
                         size_name);

TEST(VectorAddEdge, ZeroElementsWritesNothingThenFiveWork) {
  // n = 0 must launch nothing (a zero-block grid is an error) and touch nothing; the same
  // buffers then take a real call, so doing nothing at all does not pass this case.
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(kCount, -10.f, 10.f, rng);
  const auto b_host = course::random_floats(kCount, -10.f, 10.f, rng);
  GuardedInput<float> a(a_host), b(b_host);
  GuardedOutput<float> c(kCount);
  vector_add(a.data(), b.data(), c.data(), 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(c, "c after a call with n = 0"));
  const auto poison = course::testing::poison_values<float>(kCount);

  vector_add(a.data(), b.data(), c.data(), 5, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  auto expected = vector_add_reference(a_host, b_host);
  expected.resize(5);
  expected.insert(expected.end(), poison.begin() + 5, poison.end());
  EXPECT_TRUE(course::testing::equal(expected, c.download(), {{}, "c after a call with n = 5"}));
  EXPECT_TRUE(c.guards_intact("c after a call with n = 5"));
}

TEST(VectorAddEdge, RunsOnTheGivenStream) {
  // The stream is held shut while vector_add returns: a launch anywhere else (the default
  // stream, a stream of its own) writes c meanwhile, and waiting on the stream never returns.
  const int n = 1 << 20;
  auto rng = course::testing::case_rng();
  const auto a_host = course::random_floats(n, -1.f, 1.f, rng);
  const auto b_host = course::random_floats(n, -1.f, 1.f, rng);
  GuardedInput<float> a(a_host), b(b_host);
  auto c = course::testing::poisoned_output<float>(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { vector_add(a.data(), b.data(), c.data(), n, s); },
      {{c.data(), n * sizeof(float), "c"}}));
  EXPECT_TRUE(
      course::testing::equal(vector_add_reference(a_host, b_host), c.download(), {{}, "c"}));
}

TEST(VectorAddEdge, CallsAgainWithNewInputs) {
  // Same buffers, new contents: a launcher that remembers its last answer by pointer or by
  // size returns the first call's c the second time.
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> a(n), b(n), c(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto a_host = course::random_floats(n, -10.f, 10.f, rng);
    const auto b_host = course::random_floats(n, -10.f, 10.f, rng);
    a.upload(a_host);
    b.upload(b_host);
    c.fill_bytes(course::kPoisonByte);
    vector_add(a.data(), b.data(), c.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(vector_add_reference(a_host, b_host), c.download(),
                                       {{}, "c after the " + call}));
  }
}

}  // namespace
