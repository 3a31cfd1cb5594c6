// GoogleTest cases shared by every rung of the matrix-product ladder, compiled once per rung
// with COURSE_EXERCISE (the rung's launcher) and COURSE_EXERCISE_HEADER (its header) defined by
// the build, so every rung meets the same cases.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "course/testing.h"
#include "matmul_ladder.h"

#if !defined(COURSE_EXERCISE) || !defined(COURSE_EXERCISE_HEADER)
#error "the build defines COURSE_EXERCISE and COURSE_EXERCISE_HEADER (see meson.build)"
#endif
#include COURSE_EXERCISE_HEADER

namespace {

using course::testing::GuardedInput;

struct Dims {
  int m, n, k;
};

// Guard elements after C: a kernel that writes past M * N changes them.
constexpr int kGuard = 64;

using course::testing::poison_values;

// Float sums of K products of values in [-1, 1] drift from the double reference by roughly
// eps * K in the worst case; a missing or doubled term is off by far more.
course::Tolerance tolerance_for(int k) { return {1e-4, 1e-6 * k + 1e-5}; }

void check_matmul(Dims d, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  const std::size_t a_n = static_cast<std::size_t>(d.m) * d.k;
  const std::size_t b_n = static_cast<std::size_t>(d.k) * d.n;
  const std::size_t c_n = static_cast<std::size_t>(d.m) * d.n;
  GuardedInput<float> a(course::random_floats(a_n, -1.f, 1.f, rng));
  GuardedInput<float> b(course::random_floats(b_n, -1.f, 1.f, rng));
  auto c = course::testing::poisoned_output<float>(c_n + kGuard);

  COURSE_EXERCISE(a.data(), b.data(), c.data(), d.m, d.n, d.k, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  const auto all = c.download();
  const std::vector<float> got(all.begin(), all.begin() + c_n);
  EXPECT_TRUE(course::testing::close(
      matmul_ladder_reference(a.host(), b.host(), d.m, d.n, d.k), got, tolerance_for(d.k),
      {{static_cast<std::size_t>(d.m), static_cast<std::size_t>(d.n)}, "C (M x N)"}));
  EXPECT_TRUE(
      course::testing::poison_after(all, c_n, "memory after C[M * N) (must not be written)"));
  EXPECT_TRUE(a.unchanged("A"));
  EXPECT_TRUE(b.unchanged("B"));
}

class Matmul : public ::testing::TestWithParam<Dims> {};

TEST_P(Matmul, MatchesDoublePrecisionReference) { check_matmul(GetParam(), nullptr); }

std::string dims_name(const ::testing::TestParamInfo<Dims>& info) {
  return "M" + std::to_string(info.param.m) + "_N" + std::to_string(info.param.n) + "_K" +
         std::to_string(info.param.k);
}

// Sizes below, at and above a warp and a tile in every dimension, vectors (M or N = 1),
// K = 0 (C must be zeros) and K = 1, K not a multiple of any tile depth, and 128 x 256 x 64,
// whole 128-wide tiles, which the check-free path of a tiled rung takes (as the benchmark's
// 4096^3 does) and which the sanitizer then sees too.
INSTANTIATE_TEST_SUITE_P(
    Small, Matmul,
    ::testing::Values(Dims{1, 1, 1}, Dims{1, 1, 7}, Dims{7, 7, 7}, Dims{5, 3, 0}, Dims{64, 64, 1},
                      Dims{31, 33, 17}, Dims{32, 32, 32}, Dims{33, 31, 65}, Dims{1, 128, 300},
                      Dims{129, 1, 70}, Dims{127, 129, 128}, Dims{255, 257, 129},
                      Dims{128, 128, 513}, Dims{128, 256, 64}),
    dims_name);
INSTANTIATE_TEST_SUITE_P(Large, Matmul,
                         ::testing::Values(Dims{1000, 1023, 1025}, Dims{513, 2049, 257},
                                           Dims{2048, 1, 2048}, Dims{1, 2048, 2048},
                                           Dims{257, 4097, 33}),
                         dims_name);

TEST(MatmulEdge, EmptyProductWritesNothingThenSmallWorks) {
  auto rng = course::testing::case_rng();
  GuardedInput<float> a(course::random_floats(kGuard, -1.f, 1.f, rng));
  GuardedInput<float> b(course::random_floats(kGuard, -1.f, 1.f, rng));
  auto c = course::testing::poisoned_output<float>(kGuard);
  COURSE_EXERCISE(a.data(), b.data(), c.data(), 0, 4, 4, nullptr);
  COURSE_EXERCISE(a.data(), b.data(), c.data(), 4, 0, 4, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(poison_values<float>(kGuard), c.download(),
                                     {{}, "C after calls with M = 0 or N = 0"}));
  // The same buffers then take a real 3 x 5 x 4 product, so doing nothing does not pass.
  COURSE_EXERCISE(a.data(), b.data(), c.data(), 3, 5, 4, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  // The product part with tolerance; the poison (NaN) after it compares exactly by bytes.
  const auto all = c.download();
  EXPECT_TRUE(course::testing::close(matmul_ladder_reference(a.host(), b.host(), 3, 5, 4),
                                     std::vector<float>(all.begin(), all.begin() + 15),
                                     tolerance_for(4), {{3, 5}, "C after a 3 x 5 x 4 call"}));
  EXPECT_TRUE(course::testing::poison_after(all, 15, "memory after C[15) (must not be written)"));
}

// C (M x N) within tolerance of the product of a_host and b_host, and the kGuard elements
// after it untouched.
void expect_product(const std::vector<float>& a_host, const std::vector<float>& b_host, Dims d,
                    const course::DeviceBuffer<float>& c, const std::string& what) {
  const std::size_t c_n = static_cast<std::size_t>(d.m) * d.n;
  const auto all = c.download();
  EXPECT_TRUE(course::testing::close(
      matmul_ladder_reference(a_host, b_host, d.m, d.n, d.k),
      std::vector<float>(all.begin(), all.begin() + c_n), tolerance_for(d.k),
      {{static_cast<std::size_t>(d.m), static_cast<std::size_t>(d.n)}, what}));
  EXPECT_TRUE(
      course::testing::poison_after(all, c_n, "memory after C[M * N) (must not be written)"));
}

TEST(MatmulEdge, RunsOnTheGivenStream) {
  constexpr Dims d{300, 200, 100};
  auto rng = course::testing::case_rng();
  GuardedInput<float> a(course::random_floats(static_cast<std::size_t>(d.m) * d.k, -1.f, 1.f, rng));
  GuardedInput<float> b(course::random_floats(static_cast<std::size_t>(d.k) * d.n, -1.f, 1.f, rng));
  auto c = course::testing::poisoned_output<float>(static_cast<std::size_t>(d.m) * d.n + kGuard);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { COURSE_EXERCISE(a.data(), b.data(), c.data(), d.m, d.n, d.k, s); },
      {course::testing::watched(c, "C")}));
  expect_product(a.host(), b.host(), d, c, "C (M x N)");
}

TEST(MatmulEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: a product remembered from the first call (by pointer or by
  // size) fails the second check.
  constexpr Dims d{300, 200, 100};
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> a(static_cast<std::size_t>(d.m) * d.k);
  course::DeviceBuffer<float> b(static_cast<std::size_t>(d.k) * d.n);
  course::DeviceBuffer<float> c(static_cast<std::size_t>(d.m) * d.n + kGuard);
  for (const std::string call : {"first call", "second call, A and B refilled"}) {
    const auto a_host = course::random_floats(a.size(), -1.f, 1.f, rng);
    const auto b_host = course::random_floats(b.size(), -1.f, 1.f, rng);
    a.upload(a_host);
    b.upload(b_host);
    c.fill_bytes(course::kPoisonByte);
    COURSE_EXERCISE(a.data(), b.data(), c.data(), d.m, d.n, d.k, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    expect_product(a_host, b_host, d, c, "C (M x N) after the " + call);
  }
}

}  // namespace
