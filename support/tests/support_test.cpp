// Host-side tests of the support library: these run on any machine, GPU or not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "course/bench.h"
#include "course/check.h"
#include "course/compare.h"
#include "course/random.h"

namespace {

TEST(CheckMacro, NamesExpressionFileLineAndError) {
  try {
    CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "CUDA_CHECK did not throw";
  } catch (const course::CudaError& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("cudaErrorInvalidValue"), std::string::npos) << text;
    EXPECT_NE(text.find("`cudaErrorInvalidValue`"), std::string::npos) << text;
    EXPECT_NE(text.find("support_test.cpp:"), std::string::npos) << text;
    EXPECT_EQ(error.code(), cudaErrorInvalidValue);
  }
}

TEST(CheckMacro, SuccessDoesNotThrow) { EXPECT_NO_THROW(CUDA_CHECK(cudaSuccess)); }

TEST(Seed, ParsesDecimalAndHex) {
  std::uint64_t seed = 0;
  EXPECT_TRUE(course::parse_seed("12345", seed));
  EXPECT_EQ(seed, 12345u);
  EXPECT_TRUE(course::parse_seed("0xff", seed));
  EXPECT_EQ(seed, 255u);
  EXPECT_FALSE(course::parse_seed("", seed));
  EXPECT_FALSE(course::parse_seed("12x", seed));
  EXPECT_FALSE(course::parse_seed("-3", seed));
  EXPECT_FALSE(course::parse_seed("99999999999999999999999", seed));
}

TEST(Random, SameSeedAndSaltReproduce) {
  auto a = course::make_rng(42, "case");
  auto b = course::make_rng(42, "case");
  EXPECT_EQ(course::random_ints(100, -5, 5, a), course::random_ints(100, -5, 5, b));
}

TEST(Random, DifferentSaltsOrSeedsDiffer) {
  auto a = course::make_rng(42, "case-a");
  auto b = course::make_rng(42, "case-b");
  auto c = course::make_rng(43, "case-a");
  const auto va = course::random_floats(64, 0.f, 1.f, a);
  EXPECT_NE(va, course::random_floats(64, 0.f, 1.f, b));
  EXPECT_NE(va, course::random_floats(64, 0.f, 1.f, c));
}

TEST(Random, ValuesStayInRangeAndAreNotConstant) {
  auto rng = course::make_rng(7, "range");
  const auto values = course::random_ints(1000, -3, 3, rng);
  std::set<int> seen(values.begin(), values.end());
  for (int v : values) {
    EXPECT_GE(v, -3);
    EXPECT_LE(v, 3);
  }
  EXPECT_EQ(seen.size(), 7u);
}

TEST(CompareExact, ReportsFirstMismatchesWithIndex) {
  std::vector<int> expected{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<int> actual = expected;
  actual[2] = 30;
  actual[6] = -1;  // the poison value for int
  const auto c = course::compare_exact(expected, actual);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 2u);
  ASSERT_EQ(c.first.size(), 2u);
  EXPECT_EQ(c.first[0].index, 2u);
  EXPECT_FALSE(c.first[0].unwritten);
  EXPECT_TRUE(c.first[1].unwritten);
  const std::string text = c.summary();
  EXPECT_NE(text.find("2 of 8 elements differ"), std::string::npos) << text;
  EXPECT_NE(text.find("[2] expected 3, got 30"), std::string::npos) << text;
  EXPECT_NE(text.find("never written"), std::string::npos) << text;
}

TEST(CompareExact, LimitsReportAndCountsTheRest) {
  std::vector<unsigned> expected(100, 1u), actual(100, 2u);
  course::CompareOptions options;
  options.max_report = 3;
  const auto c = course::compare_exact(expected, actual, options);
  EXPECT_EQ(c.mismatches, 100u);
  EXPECT_EQ(c.first.size(), 3u);
  EXPECT_NE(c.summary().find("and 97 more"), std::string::npos);
}

TEST(CompareExact, PrintsCoordinatesForAShape) {
  std::vector<int> expected(12, 0), actual(12, 0);
  actual[7] = 1;  // row 1, column 3 of a 3x4 array
  course::CompareOptions options;
  options.shape = {3, 4};
  const auto text = course::compare_exact(expected, actual, options).summary();
  EXPECT_NE(text.find("[7] (1, 3)"), std::string::npos) << text;
}

TEST(CompareExact, SizeMismatchFails) {
  EXPECT_FALSE(course::compare_exact(std::vector<int>{1, 2}, std::vector<int>{1}).ok);
}

TEST(CompareClose, AcceptsWithinToleranceRejectsBeyond) {
  std::vector<float> expected{1.0f, 100.0f, 0.0f};
  std::vector<float> near{1.0f + 5e-7f, 100.0f * (1 + 5e-6f), 5e-7f};
  std::vector<float> far{1.01f, 100.0f, 0.0f};
  course::Tolerance tol{1e-5, 1e-6};
  EXPECT_TRUE(course::compare_close(expected, near, tol).ok);
  EXPECT_FALSE(course::compare_close(expected, far, tol).ok);
}

TEST(CompareClose, NanAndInfAreMismatches) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  course::Tolerance loose{1.0, 1.0};
  EXPECT_FALSE(course::compare_close(std::vector<float>{1.f}, std::vector<float>{nan}, loose).ok);
  EXPECT_FALSE(course::compare_close(std::vector<float>{1.f}, std::vector<float>{inf}, loose).ok);
  EXPECT_FALSE(course::compare_close(std::vector<float>{inf}, std::vector<float>{1e30f}, loose).ok);
  EXPECT_TRUE(course::compare_close(std::vector<float>{inf}, std::vector<float>{inf}, loose).ok);
}

TEST(Poison, AllOnesBytesArePoison) {
  float f;
  std::memset(&f, course::kPoisonByte, sizeof f);
  EXPECT_TRUE(std::isnan(f));
  EXPECT_TRUE(course::is_poison(f));
  EXPECT_TRUE(course::is_poison(-1));
  EXPECT_FALSE(course::is_poison(0));
  EXPECT_FALSE(course::is_poison(1.0f));
}

TEST(BenchStatistics, MedianAndSpread) {
  EXPECT_DOUBLE_EQ(course::median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(course::median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(course::relative_spread({1, 1, 1, 1}), 0.0);
  EXPECT_GT(course::relative_spread({1, 2, 3, 4, 5}), 0.5);
}

TEST(BenchStatistics, RateUnits) {
  EXPECT_DOUBLE_EQ(course::rate_of(2e9, 1000.0, course::Unit::GBps), 2.0);
  EXPECT_DOUBLE_EQ(course::rate_of(3e12, 1000.0, course::Unit::TFLOPs), 3.0);
  EXPECT_DOUBLE_EQ(course::rate_of(1e9, 0.0, course::Unit::GBps), 0.0);
}

TEST(Json, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(course::json_escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
}

}  // namespace
