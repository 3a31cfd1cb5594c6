// Host-side tests of the support library: these run on any machine, GPU or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "course/bench.h"
#include "course/check.h"
#include "course/compare.h"
#include "course/device_random.h"
#include "course/json.h"
#include "course/parallel.h"
#include "course/random.h"
#include "course/testing.h"

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

TEST(Random, ALongDrawStartsWithTheShortDrawOfTheSameGenerator) {
  // The long draws are split over the cores; each element depends on its index alone.
  for (const std::size_t n : {std::size_t{5}, std::size_t{3} << 20}) {
    auto short_rng = course::make_rng(9, "prefix");
    auto long_rng = course::make_rng(9, "prefix");
    const auto few = course::random_floats(1000, -2.f, 3.f, short_rng);
    const auto many = course::random_floats(n + 1000, -2.f, 3.f, long_rng);
    EXPECT_TRUE(std::equal(few.begin(), few.end(), many.begin())) << "n = " << n;
    EXPECT_EQ(short_rng(), long_rng()) << "one draw from the generator either way";
  }
  auto a = course::make_rng(9, "ints");
  auto b = course::make_rng(9, "ints");
  const auto ints = course::random_ints(std::size_t{3} << 20, -1000, 1000, a);
  const auto head = course::random_ints(64, -1000, 1000, b);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), ints.begin()));
}

TEST(Random, FullRangesReachBothEndsAndAveragesAreCentred) {
  auto rng = course::make_rng(3, "full");
  const auto ints = course::random_ints(1 << 20, std::numeric_limits<int>::min(),
                                        std::numeric_limits<int>::max(), rng);
  const auto [lo, hi] = std::minmax_element(ints.begin(), ints.end());
  EXPECT_LT(*lo, std::numeric_limits<int>::min() / 1000 * 999);
  EXPECT_GT(*hi, std::numeric_limits<int>::max() / 1000 * 999);
  const auto uints = course::random_uints(1 << 20, 0u, std::numeric_limits<unsigned>::max(), rng);
  EXPECT_GT(*std::max_element(uints.begin(), uints.end()), 4290000000u);
  const auto small = course::random_uints(1 << 16, 5u, 6u, rng);
  EXPECT_EQ(std::set<unsigned>(small.begin(), small.end()), (std::set<unsigned>{5u, 6u}));
  const auto floats = course::random_floats(1 << 20, 10.f, 20.f, rng);
  double sum = 0.0;
  for (const float v : floats) {
    ASSERT_GE(v, 10.f);
    ASSERT_LT(v, 20.f);
    sum += v;
  }
  EXPECT_NEAR(sum / floats.size(), 15.0, 0.05);
}

TEST(Parallel, EveryIndexOnceInChunkOrder) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{999}, std::size_t{100003}}) {
    for (const unsigned threads : {1u, 3u, 16u}) {
      std::vector<int> hits(n, 0);
      std::vector<std::pair<std::size_t, std::size_t>> ranges(course::chunk_count(n, 100, threads));
      const std::size_t chunks = course::parallel_chunks(
          n, 100, [&](std::size_t c, std::size_t begin, std::size_t end) {
            ranges[c] = {begin, end};
            for (std::size_t i = begin; i < end; ++i) ++hits[i];
          }, threads);
      ASSERT_EQ(chunks, ranges.size());
      EXPECT_LE(chunks, threads);
      EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; })) << n;
      for (std::size_t c = 0; c + 1 < chunks; ++c) EXPECT_EQ(ranges[c].second, ranges[c + 1].first);
      if (n > 0) {
        EXPECT_EQ(ranges.back().second, n);
      }
    }
  }
  EXPECT_EQ(course::chunk_count(99, 100, 16), 1u) << "under one thread's share: no threads";
  EXPECT_EQ(course::chunk_count(1000, 100, 4), 4u);
}

TEST(Parallel, AnExceptionInOneChunkReachesTheCaller) {
  EXPECT_THROW(course::parallel_chunks(
                   4000, 100,
                   [](std::size_t c, std::size_t, std::size_t) {
                     if (c == 2) throw std::runtime_error("chunk 2");
                   },
                   4),
               std::runtime_error);
}

TEST(Hash, IsSplitmix64OfTheIndex) {
  // splitmix64's first output from state 0 (Vigna's reference code).
  EXPECT_EQ(course::hash_index(0, 0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(course::hashed_uint(0, 0), 0xE220A839u);
  EXPECT_EQ(course::hashed_int(0, 0), static_cast<int>(0xE220A839u));
}

TEST(Hash, DeterministicAndSeedsDiffer) {
  std::size_t same_as_other_seed = 0;
  std::set<std::uint64_t> distinct;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(course::hash_index(i, 42), course::hash_index(i, 42));
    EXPECT_EQ(course::hashed_float(i, 42), course::hashed_float(i, 42));
    if (course::hashed_uint(i, 42) == course::hashed_uint(i, 43)) ++same_as_other_seed;
    distinct.insert(course::hash_index(i, 42));
  }
  EXPECT_EQ(distinct.size(), 1000u);
  EXPECT_LE(same_as_other_seed, 1u);
}

TEST(Hash, IntsCoverTheFullRange) {
  int lowest = 0, highest = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    lowest = std::min(lowest, course::hashed_int(i, 7));
    highest = std::max(highest, course::hashed_int(i, 7));
  }
  // Full 32-bit range: within 0.1 % of both ends after 100000 draws.
  EXPECT_LT(lowest, std::numeric_limits<int>::min() / 1000 * 999);
  EXPECT_GT(highest, std::numeric_limits<int>::max() / 1000 * 999);
}

TEST(Hash, TheSumOnAllCoresIsTheSumOneByOne) {
  // Counts that leave some workers nothing, and one that does not divide among them.
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{100003}}) {
    long long one_by_one = 0;
    for (std::size_t i = 0; i < n; ++i) one_by_one += course::hashed_int(i, 11);
    EXPECT_EQ(course::hashed_int_sum(n, 11), one_by_one) << "n = " << n;
  }
}

TEST(Hash, FloatsStayInRangeAndTheDefaultRangeIsExact) {
  double sum = 0.0;
  float lowest = 1.0f, highest = -1.0f;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const float v = course::hashed_float(i, 11);
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    // A whole multiple of 2^-23: the 24 hashed bits, nothing rounded away.
    const float scaled = v * 8388608.0f;
    ASSERT_EQ(scaled, std::floor(scaled)) << "index " << i << ": " << v;
    lowest = std::min(lowest, v);
    highest = std::max(highest, v);
    sum += v;
  }
  EXPECT_LT(lowest, -0.999f);
  EXPECT_GT(highest, 0.999f);
  EXPECT_NEAR(sum / 100000, 0.0, 0.01);
  for (const auto& [lo, hi] : {std::pair{-10.0f, 10.0f}, std::pair{0.0f, 1.0f},
                               std::pair{100.0f, 100.5f}, std::pair{-3.0f, -2.0f}}) {
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const float v = course::hashed_float(i, 5, lo, hi);
      ASSERT_GE(v, lo) << i;
      ASSERT_LT(v, hi) << i;
    }
  }
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

TEST(CompareExact, ALongComparisonReportsAsOnePassWould) {
  // Mismatches in several of the ranges the cores take: counted in full, the first few in
  // index order, never-written ones still named.
  const std::size_t n = std::size_t{5} << 20;
  std::vector<float> expected(n, 1.0f), actual(n, 1.0f);
  const std::vector<std::size_t> wrong{3, 2'000'000, 2'000'001, 4'500'000, n - 1};
  for (const std::size_t i : wrong) actual[i] = 2.0f;
  std::memset(&actual[4'500'000], course::kPoisonByte, sizeof(float));
  course::CompareOptions options;
  options.max_report = 4;
  const auto c = course::compare_close(expected, actual, {}, options);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, wrong.size());
  ASSERT_EQ(c.first.size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(c.first[k].index, wrong[k]);
  EXPECT_TRUE(c.first[3].unwritten);
  EXPECT_NE(c.summary().find("and 1 more"), std::string::npos) << c.summary();
  actual = expected;
  EXPECT_TRUE(course::compare_exact(expected, actual).ok);
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
  const auto c = course::compare_close(std::vector<float>{1.f}, std::vector<float>{}, {},
                                       {{}, "out"});
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.summary().find("expected size 1, got size 0"), std::string::npos) << c.summary();
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

TEST(CompareNan, NanMatchesOnlyNanAndPoisonOnlyPoison) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float poison = course::testing::poison_values<float>(1)[0];
  course::Tolerance loose{1.0, 1.0};
  // A finite value where the reference is NaN, and the other way round.
  EXPECT_FALSE(course::compare_exact(std::vector<float>{nan}, std::vector<float>{1.f}).ok);
  EXPECT_FALSE(course::compare_exact(std::vector<float>{1.f}, std::vector<float>{nan}).ok);
  EXPECT_FALSE(course::compare_close(std::vector<float>{nan}, std::vector<float>{1.f}, loose).ok);
  // A computed NaN matches a NaN result...
  EXPECT_TRUE(course::compare_exact(std::vector<float>{nan}, std::vector<float>{-nan}).ok);
  EXPECT_TRUE(course::compare_close(std::vector<float>{nan}, std::vector<float>{nan}, loose).ok);
  // ...but not an element never written, which holds the poison (also a NaN).
  const auto unwritten = course::compare_exact(std::vector<float>{nan}, std::vector<float>{poison});
  EXPECT_FALSE(unwritten.ok);
  EXPECT_NE(unwritten.summary().find("never written"), std::string::npos) << unwritten.summary();
  EXPECT_FALSE(course::compare_close(std::vector<float>{nan}, std::vector<float>{poison}, loose).ok);
  // An output a launcher must leave untouched is compared with the poison itself.
  EXPECT_TRUE(course::compare_exact(std::vector<float>{poison}, std::vector<float>{poison}).ok);
  EXPECT_FALSE(course::compare_exact(std::vector<double>{-std::numeric_limits<double>::infinity()},
                                     std::vector<double>{std::numeric_limits<double>::infinity()}).ok);
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

TEST(PoisonValues, EveryByteIsThePoison) {
  const auto floats = course::testing::poison_values<float>(3);
  ASSERT_EQ(floats.size(), 3u);
  for (const float f : floats) EXPECT_TRUE(course::is_poison(f));
  EXPECT_EQ(course::testing::poison_values<int>(2), (std::vector<int>{-1, -1}));
}

// Guard zones as GuardedOutput downloads them, for check_guards on the host.
struct Zones {
  std::vector<unsigned char> front, back;
  Zones(std::size_t before, std::size_t after, std::size_t size)
      : front(before * size, course::kPoisonByte), back(after * size, course::kPoisonByte) {}
  ::testing::AssertionResult check(std::size_t size, std::size_t count) const {
    return course::testing::check_guards(front.data(), front.size() / size, back.data(),
                                         back.size() / size, size, count, "out");
  }
};

TEST(CheckGuards, IntactGuardsPass) {
  EXPECT_TRUE(Zones(64, 64, 4).check(4, 1000));
  EXPECT_TRUE(Zones(0, 0, 4).check(4, 0));
}

TEST(CheckGuards, AWriteOnePastTheEndIsNamedWithItsOffset) {
  Zones z(64, 64, 4);
  z.back[0] = 0;  // one byte of the element right after the last one
  const auto result = z.check(4, 1000);
  ASSERT_FALSE(result);
  const std::string text = result.message();
  EXPECT_NE(text.find("the guard after it: 1 of 64 elements changed"), std::string::npos) << text;
  EXPECT_NE(text.find("out[1000] (0 past the end)"), std::string::npos) << text;
  EXPECT_EQ(text.find("guard before"), std::string::npos) << text;
}

TEST(CheckGuards, WritesBeforeTheStartAreNamedNearestFirst) {
  Zones z(8, 8, 8);
  z.front[7 * 8 + 3] = 1;  // element -1
  z.front[5 * 8] = 1;      // element -3
  z.back[7 * 8 + 7] = 1;   // the last element of the back guard
  const auto result = z.check(8, 5);
  ASSERT_FALSE(result);
  const std::string text = result.message();
  EXPECT_NE(text.find("the guard before it: 2 of 8 elements changed, at out[-1], out[-3]"),
            std::string::npos) << text;
  EXPECT_NE(text.find("the guard after it: 1 of 8 elements changed, at out[12] (7 past the end)"),
            std::string::npos) << text;
}

TEST(CheckGuards, LongRunsAreCounted) {
  Zones z(64, 64, 4);
  std::fill(z.back.begin(), z.back.end(), 0);
  const std::string text = z.check(4, 10).message();
  EXPECT_NE(text.find("64 of 64 elements changed"), std::string::npos) << text;
  EXPECT_NE(text.find("and 59 more"), std::string::npos) << text;
}

TEST(Sizes, SmallAndLargeSplitTheAdversarialSizes) {
  const auto all = course::testing::adversarial_sizes();
  const auto small = course::testing::small_sizes();
  const auto large = course::testing::large_sizes();
  EXPECT_EQ(small.size() + large.size(), all.size());
  for (const std::size_t n : small) EXPECT_LT(n, course::testing::kLargeSize);
  for (const std::size_t n : large) EXPECT_GE(n, course::testing::kLargeSize);
  EXPECT_EQ(small.front(), 1u);
  EXPECT_TRUE(std::is_sorted(small.begin(), small.end()));
}

TEST(Sizes, ExtrasAreMergedSortedWithoutRepeats) {
  const auto small = course::testing::small_sizes({64, 2, 7});
  EXPECT_TRUE(std::is_sorted(small.begin(), small.end()));
  EXPECT_EQ(std::adjacent_find(small.begin(), small.end()), small.end());
  EXPECT_NE(std::find(small.begin(), small.end(), 64u), small.end());
  EXPECT_EQ(small[1], 2u);
  const auto large = course::testing::large_sizes({(1u << 25) + 3});
  EXPECT_EQ(large, (std::vector<std::size_t>{1000003, (1u << 25) + 3}));
}

TEST(BenchStatistics, Median) {
  EXPECT_DOUBLE_EQ(course::median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(course::median({4, 1, 2, 3}), 2.5);
}

// The values 1..n, shuffled: the interval's ends are then the ranks themselves.
std::vector<double> shuffled_ranks(int n) {
  std::vector<double> values(n);
  for (int i = 0; i < n; ++i) values[i] = i + 1;
  std::mt19937 rng(12345);
  std::shuffle(values.begin(), values.end(), rng);
  return values;
}

TEST(BenchStatistics, MedianIntervalTakesTheBinomialRanks) {
  // Five values cannot make a 95% interval (both extremes outside the median: 2/32 > 5%).
  EXPECT_FALSE(course::median_interval(shuffled_ranks(5)).known);
  // Six: the extremes (2/64 = 3.1% outside).
  const auto six = course::median_interval(shuffled_ranks(6));
  EXPECT_TRUE(six.known);
  EXPECT_DOUBLE_EQ(six.low, 1.0);
  EXPECT_DOUBLE_EQ(six.high, 6.0);
  // Ten: the 2nd and 9th (22/1024 = 2.1% outside; the 3rd and 8th would leave 10.9%).
  const auto ten = course::median_interval(shuffled_ranks(10));
  EXPECT_DOUBLE_EQ(ten.low, 2.0);
  EXPECT_DOUBLE_EQ(ten.high, 9.0);
  // A hundred: the 40th and 61st, as the tables of the sign test give.
  const auto hundred = course::median_interval(shuffled_ranks(100));
  EXPECT_DOUBLE_EQ(hundred.low, 40.0);
  EXPECT_DOUBLE_EQ(hundred.high, 61.0);
  // Two thousand values: 2^-2000 underflows a double, the log-space sum does not.
  const auto many = course::median_interval(shuffled_ranks(2000));
  EXPECT_TRUE(many.known);
  EXPECT_LT(many.low, 1000.5);
  EXPECT_GT(many.high, 1000.5);
  EXPECT_GT(many.low, 900.0);
}

TEST(BenchStatistics, MedianPrecisionIsTheIntervalsReachFromTheMedian) {
  EXPECT_DOUBLE_EQ(course::median_precision({100, 100, 100, 100, 100, 101}), 0.01);
  EXPECT_DOUBLE_EQ(course::median_precision({100, 98, 100, 100, 100, 100}), 0.02);
  EXPECT_TRUE(std::isinf(course::median_precision({1, 1, 1, 1, 1})));
}

TEST(BenchStatistics, RateUnits) {
  EXPECT_DOUBLE_EQ(course::rate_of(2e9, 1000.0, course::Unit::GBps), 2.0);
  EXPECT_DOUBLE_EQ(course::rate_of(3e12, 1000.0, course::Unit::TFLOPs), 3.0);
  EXPECT_DOUBLE_EQ(course::rate_of(1e9, 0.0, course::Unit::GBps), 0.0);
}

// A strict reader of RFC 8259 JSON text: true when `text` is exactly one valid value.
class JsonChecker {
 public:
  static bool valid(std::string_view text) {
    JsonChecker c{text};
    return c.value() && c.skip_space() == text.size();
  }

 private:
  explicit JsonChecker(std::string_view text) : s_(text) {}
  std::size_t skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
    return i_;
  }
  bool eat(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool digits() {
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    return i_ > start;
  }
  bool number() {
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (i_ < s_.size() && s_[i_] == '.' && (++i_, !digits())) return false;
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digits()) return false;
    }
    return true;
  }
  bool string() {
    if (!eat('"')) return false;
    while (i_ < s_.size()) {
      const auto c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') continue;
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      if (e == 'u') {
        for (int k = 0; k < 4; ++k, ++i_)
          if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }
  template <class Element>
  bool sequence(char close, Element element) {
    if (eat(close)) return true;
    do {
      if (!element()) return false;
    } while (eat(','));
    return eat(close);
  }
  bool value() {
    skip_space();
    if (i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{':
        ++i_;
        return sequence('}', [this] { return string() && eat(':') && value(); });
      case '[':
        ++i_;
        return sequence(']', [this] { return value(); });
      case '"': return string();
      case 't': return word("true");
      case 'f': return word("false");
      case 'n': return word("null");
      default: return number();
    }
  }
  std::string_view s_;
  std::size_t i_ = 0;
};

TEST(JsonChecker, RejectsWhatIsNotJson) {
  EXPECT_TRUE(JsonChecker::valid(R"({"a":[1,-2.5e+3,true,null,"x\u0001"],"b":{}})"));
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "01", "1.", ".5", "nan", "\"a\nb\"",
                          "'a'", "{a:1}", "[1] [2]", "\"\\x\""})
    EXPECT_FALSE(JsonChecker::valid(bad)) << bad;
}

TEST(Json, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(course::json_escape("a\"b\\c\nd\x01"), "a\\\"b\\\\c\\nd\\u0001");
  EXPECT_EQ(course::json_escape("tab\tcr\r\x1f"), "tab\\tcr\\r\\u001f");
  EXPECT_EQ(course::json_escape("caf\xc3\xa9 / ok"), "caf\xc3\xa9 / ok");  // UTF-8 passes through
}

TEST(Json, NumbersAreShortestAndReadBackExactly) {
  EXPECT_EQ(course::json_number(0.0), "0");
  EXPECT_EQ(course::json_number(1.5), "1.5");
  EXPECT_EQ(course::json_number(-2.0), "-2");
  EXPECT_EQ(course::json_number(0.1), "0.1");
  EXPECT_EQ(course::json_number(1e300), "1e+300");
  EXPECT_EQ(course::json_number(0.1f), "0.1");  // as a float, not 0.100000001490116
  for (const double v : {1.0 / 3.0, 2.0 / 3.0 * 1e-300, 123456789.123456789, 5e-324,
                         std::numeric_limits<double>::max(), -0.0001220703125}) {
    const std::string text = course::json_number(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
  }
  for (const float v : {1.0f / 3.0f, 16777217.0f, std::numeric_limits<float>::min()}) {
    const std::string text = course::json_number(v);
    EXPECT_EQ(std::strtof(text.c_str(), nullptr), v) << text;
  }
}

TEST(Json, NonFiniteNumbersBecomeNull) {
  EXPECT_EQ(course::json_number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(course::json_number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(course::json_number(-std::numeric_limits<float>::infinity()), "null");
}

TEST(Json, WriterNestsObjectsAndArraysWithCommas) {
  course::JsonWriter json;
  json.begin_object().field("name", "copy \"x\"").field("n", 3).field("big", std::size_t{1} << 40);
  json.field("neg", -7L).field("ok", true).field("rate", 812.5);
  json.key("list").begin_array().value(1.5).value(false).null().begin_object().end_object();
  json.begin_array().end_array().end_array();
  json.key("empty").begin_object().end_object();
  json.field("done", true).end_object();
  EXPECT_TRUE(json.complete());
  EXPECT_TRUE(JsonChecker::valid(json.str())) << json.str();
  EXPECT_EQ(json.str(),
            "{\"name\":\"copy \\\"x\\\"\",\"n\":3,\"big\":1099511627776,\"neg\":-7,"
            "\"ok\":true,\"rate\":812.5,\"list\":[1.5,false,null,{},[]],\"empty\":{},"
            "\"done\":true}");
}

TEST(Json, EveryByteOfAStringSurvivesAsValidJson) {
  std::string all;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  course::JsonWriter json;
  json.begin_object().field(all, all).field("n", std::numeric_limits<double>::quiet_NaN());
  json.end_object();
  // Bytes >= 0x80 pass through as they are; the checker, like the grader, accepts them.
  EXPECT_TRUE(JsonChecker::valid(json.str())) << json.str();
}

TEST(Json, StringOverloadsAreNotTakenForBooleans) {
  // A string literal must not turn into `true` through the pointer-to-bool conversion.
  course::JsonWriter json;
  const std::string s = "b";
  json.begin_array().value("a").value(s).value(std::string_view("c")).end_array();
  EXPECT_EQ(json.str(), "[\"a\",\"b\",\"c\"]");
}

TEST(Json, MisuseThrows) {
  course::JsonWriter a;
  a.begin_object();
  EXPECT_THROW(a.value(1), std::logic_error);  // a value in an object needs a key
  EXPECT_THROW(a.end_array(), std::logic_error);
  EXPECT_THROW(a.str(), std::logic_error);  // not closed
  course::JsonWriter b;
  EXPECT_THROW(b.key("k"), std::logic_error);
  b.value(1);
  EXPECT_THROW(b.value(2), std::logic_error);  // a second top-level value
  EXPECT_EQ(b.str(), "1");
}

}  // namespace
