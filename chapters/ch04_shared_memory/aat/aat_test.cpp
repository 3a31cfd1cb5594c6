#include "aat.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "aat_reference.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

struct Dims {
  int m, k;
};

// Float sums of k products of values in [-1, 1] drift from the double reference by roughly
// eps * k at worst; a missing or doubled term is off by far more.
course::Tolerance tolerance_for(int k) { return {1e-4, 1e-6 * k + 1e-5}; }

void check_aat(Dims d, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  const std::size_t a_n = static_cast<std::size_t>(d.m) * d.k;
  const std::size_t c_n = static_cast<std::size_t>(d.m) * d.m;
  GuardedInput<float> a(course::random_floats(a_n, -1.f, 1.f, rng));
  GuardedOutput<float> c(c_n);

  aat(a.data(), c.data(), d.m, d.k, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EXPECT_TRUE(course::testing::close(
      aat_reference(a.host(), d.m, d.k), c.download(), tolerance_for(d.k),
      {{static_cast<std::size_t>(d.m), static_cast<std::size_t>(d.m)}, "C (m x m)"}));
  EXPECT_TRUE(c.guards_intact("C (m x m)"));
  EXPECT_TRUE(a.unchanged("A"));
}

class Aat : public ::testing::TestWithParam<Dims> {};

TEST_P(Aat, MatchesDoublePrecisionReference) { check_aat(GetParam(), nullptr); }

std::string dims_name(const ::testing::TestParamInfo<Dims>& info) {
  return "m" + std::to_string(info.param.m) + "_k" + std::to_string(info.param.k);
}

// m and k below, at and above the 32-wide tile, k = 0 (C must be zeros) and k = 1, a single
// row (C is 1 x 1, k long), and k not a multiple of any tile depth.
INSTANTIATE_TEST_SUITE_P(Small, Aat,
                         ::testing::Values(Dims{1, 1}, Dims{1, 7}, Dims{7, 1}, Dims{5, 0},
                                           Dims{31, 33}, Dims{32, 32}, Dims{33, 31},
                                           Dims{64, 1}, Dims{1, 1000}, Dims{100, 300},
                                           Dims{127, 129}, Dims{255, 64}, Dims{257, 97}),
                         dims_name);
INSTANTIATE_TEST_SUITE_P(Large, Aat,
                         ::testing::Values(Dims{1000, 1025}, Dims{2049, 100}, Dims{1, 300001},
                                           Dims{3001, 33}, Dims{4096, 32}),
                         dims_name);

TEST(AatEdge, EmptyMatrixWritesNothingThenSmallWorks) {
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  GuardedInput<float> a(course::random_floats(kCount, -1.f, 1.f, rng));
  GuardedOutput<float> c(kCount);
  aat(a.data(), c.data(), 0, 4, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(c, "C after a call with m = 0"));
  // The same buffers then take a real 5 x 3 call, so doing nothing does not pass.
  aat(a.data(), c.data(), 5, 3, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> used(a.host().begin(), a.host().begin() + 15);
  const auto all = c.download();
  EXPECT_TRUE(course::testing::close(aat_reference(used, 5, 3),
                                     std::vector<float>(all.begin(), all.begin() + 25),
                                     tolerance_for(3), {{5, 5}, "C after a 5 x 3 call"}));
  EXPECT_TRUE(course::testing::poison_after(all, 25, "memory after C[25) (must not be written)"));
  EXPECT_TRUE(c.guards_intact("C after a 5 x 3 call"));
}

TEST(AatEdge, RunsOnTheGivenStream) {
  constexpr Dims d{300, 200};
  auto rng = course::testing::case_rng();
  GuardedInput<float> a(course::random_floats(static_cast<std::size_t>(d.m) * d.k, -1.f, 1.f, rng));
  GuardedOutput<float> c(static_cast<std::size_t>(d.m) * d.m);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { aat(a.data(), c.data(), d.m, d.k, s); },
      {course::testing::watched(c, "C")}));
  EXPECT_TRUE(course::testing::close(
      aat_reference(a.host(), d.m, d.k), c.download(), tolerance_for(d.k),
      {{static_cast<std::size_t>(d.m), static_cast<std::size_t>(d.m)}, "C (m x m)"}));
  EXPECT_TRUE(c.guards_intact("C (m x m)"));
}

TEST(AatEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: a result remembered from the first call (by pointer or by
  // size) fails the second check.
  constexpr Dims d{300, 200};
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> a(static_cast<std::size_t>(d.m) * d.k);
  GuardedOutput<float> c(static_cast<std::size_t>(d.m) * d.m);
  for (const std::string call : {"first call", "second call, A refilled"}) {
    const auto a_host = course::random_floats(a.size(), -1.f, 1.f, rng);
    a.upload(a_host);
    c.repoison();
    aat(a.data(), c.data(), d.m, d.k, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::close(
        aat_reference(a_host, d.m, d.k), c.download(), tolerance_for(d.k),
        {{static_cast<std::size_t>(d.m), static_cast<std::size_t>(d.m)}, "C after the " + call}));
  }
  EXPECT_TRUE(c.guards_intact("C after two calls"));
}

}  // namespace
