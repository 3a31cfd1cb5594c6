#include "register_spilling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "course/testing.h"
#include "register_spilling_reference.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;
using Shape = std::pair<int, int>;  // rows, cols

std::size_t pixels(int rows, int cols) { return static_cast<std::size_t>(rows) * cols; }

// Filters `image` (rows x cols) into a poisoned, guarded output and compares with the host
// reference exactly: a median is one of the inputs, so there is no rounding to allow for.
void check_median(std::vector<float> image, int rows, int cols, cudaStream_t stream) {
  GuardedInput<float> in(std::move(image));
  GuardedOutput<float> out(pixels(rows, cols));

  median_filter_5x5(in.data(), out.data(), rows, cols, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EXPECT_TRUE(course::testing::equal(register_spilling_reference(in.host(), rows, cols),
                                     out.download(),
                                     {{static_cast<std::size_t>(rows),
                                       static_cast<std::size_t>(cols)},
                                      "out (rows x cols)"}));
  EXPECT_TRUE(out.guards_intact("out (rows * cols)"));
  EXPECT_TRUE(in.unchanged("in"));
}

void check_random_image(int rows, int cols, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  check_median(course::random_floats(pixels(rows, cols), -1000.f, 1000.f, rng), rows, cols,
               stream);
}

class RegisterSpilling : public ::testing::TestWithParam<Shape> {};

TEST_P(RegisterSpilling, MatchesReference) {
  check_random_image(GetParam().first, GetParam().second, nullptr);
}

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(info.param.first) + "x" + std::to_string(info.param.second);
}

// Images smaller than the window (every window clamped on both sides, down to one pixel whose
// window is 25 copies of itself), one row or one column, one above and below the 32 x 8 tile
// and a warp, primes; then a row of a million pixels, a column of a million (more tiles down
// than gridDim.y allows), and images of a few million pixels.
INSTANTIATE_TEST_SUITE_P(Small, RegisterSpilling,
                         ::testing::Values(Shape{1, 1}, Shape{1, 2}, Shape{2, 1}, Shape{2, 3},
                                           Shape{3, 2}, Shape{4, 4}, Shape{5, 5}, Shape{1, 7},
                                           Shape{7, 1}, Shape{6, 9}, Shape{8, 32}, Shape{9, 33},
                                           Shape{31, 33}, Shape{32, 32}, Shape{33, 31},
                                           Shape{1, 100}, Shape{100, 1}, Shape{7, 257},
                                           Shape{127, 129}, Shape{255, 257}),
                         shape_name);
INSTANTIATE_TEST_SUITE_P(Large, RegisterSpilling,
                         ::testing::Values(Shape{1, 1000003}, Shape{1000003, 1},
                                           Shape{1025, 2047}, Shape{2053, 2039},
                                           Shape{524288 + 9, 3}),
                         shape_name);

// Inputs chosen to take every path of a sort: already sorted, reversed, many ties, runs of equal
// values, the extreme floats, and salt-and-pepper noise (what a median filter is for).
enum class Pattern { kAscending, kDescending, kFewValues, kEqualRuns, kExtremes, kSaltAndPepper };

struct PatternCase {
  Pattern pattern;
  Shape shape;
};

std::vector<float> pattern_image(Pattern pattern, std::size_t n, std::mt19937_64& rng) {
  std::vector<float> image = course::random_floats(n, -1000.f, 1000.f, rng);
  switch (pattern) {
    case Pattern::kAscending:  // every window row, and every window column, increases
      std::sort(image.begin(), image.end());
      break;
    case Pattern::kDescending:
      std::sort(image.begin(), image.end(), [](float a, float b) { return a > b; });
      break;
    case Pattern::kFewValues: {  // three values: most windows hold many copies of the median
      const auto small = course::random_ints(n, -1, 1, rng);
      std::transform(small.begin(), small.end(), image.begin(),
                     [](int v) { return static_cast<float>(v); });
      break;
    }
    case Pattern::kEqualRuns: {  // runs of 1 to 12 equal values along each row
      std::uniform_int_distribution<std::size_t> run_length(1, 12);
      for (std::size_t i = 0; i < n;) {
        const std::size_t end = std::min(n, i + run_length(rng));
        std::fill(image.begin() + i, image.begin() + end, image[i]);
        i = end;
      }
      break;
    }
    case Pattern::kExtremes: {  // infinities, the largest and smallest floats, both zeros
      using limits = std::numeric_limits<float>;
      const float extremes[] = {limits::infinity(), -limits::infinity(), limits::max(),
                                -limits::max(), limits::min(), -limits::min(),
                                limits::denorm_min(), -limits::denorm_min(), 0.0f, -0.0f};
      std::uniform_int_distribution<int> pick(0, 2 * static_cast<int>(std::size(extremes)) - 1);
      for (float& v : image) {
        const int k = pick(rng);  // half of the picks keep the random value
        if (k < static_cast<int>(std::size(extremes))) v = extremes[k];
      }
      break;
    }
    case Pattern::kSaltAndPepper: {  // a smooth ramp with one pixel in five blown out
      std::bernoulli_distribution noisy(0.2);
      for (std::size_t i = 0; i < n; ++i) {
        const float ramp = static_cast<float>(i % 97) + image[i] * 1e-3f;
        image[i] = noisy(rng) ? (image[i] < 0 ? -1e30f : 1e30f) : ramp;
      }
      break;
    }
  }
  return image;
}

const char* pattern_name(Pattern pattern) {
  switch (pattern) {
    case Pattern::kAscending: return "ascending";
    case Pattern::kDescending: return "descending";
    case Pattern::kFewValues: return "few_values";
    case Pattern::kEqualRuns: return "equal_runs";
    case Pattern::kExtremes: return "extremes";
    case Pattern::kSaltAndPepper: return "salt_and_pepper";
  }
  return "unknown";
}

class MedianPatterns : public ::testing::TestWithParam<PatternCase> {};

TEST_P(MedianPatterns, MatchesReference) {
  const PatternCase& c = GetParam();
  auto rng = course::testing::case_rng();
  const auto [rows, cols] = c.shape;
  check_median(pattern_image(c.pattern, pixels(rows, cols), rng), rows, cols, nullptr);
}

std::vector<PatternCase> pattern_cases() {
  std::vector<PatternCase> cases;
  for (Pattern p : {Pattern::kAscending, Pattern::kDescending, Pattern::kFewValues,
                    Pattern::kEqualRuns, Pattern::kExtremes, Pattern::kSaltAndPepper})
    for (Shape s : {Shape{3, 200}, Shape{61, 67}}) cases.push_back({p, s});
  return cases;
}

std::string pattern_case_name(const ::testing::TestParamInfo<PatternCase>& info) {
  return std::string(pattern_name(info.param.pattern)) + "_" +
         std::to_string(info.param.shape.first) + "x" + std::to_string(info.param.shape.second);
}

// Small images: the sanitizer runs these too (Small/*).
INSTANTIATE_TEST_SUITE_P(Small, MedianPatterns, ::testing::ValuesIn(pattern_cases()),
                         pattern_case_name);

TEST(RegisterSpillingEdge, EmptyImageWritesNothingThenSmallWorks) {
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  GuardedInput<float> in(course::random_floats(kCount, -10.f, 10.f, rng));
  GuardedOutput<float> out(kCount);
  median_filter_5x5(in.data(), out.data(), 0, 5, nullptr);
  median_filter_5x5(in.data(), out.data(), 5, 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(out, "out after calls with rows = 0 or cols = 0"));
  EXPECT_TRUE(in.unchanged("in"));
  // A 3 x 5 image right after, so that doing nothing does not pass.
  check_random_image(3, 5, nullptr);
}

TEST(RegisterSpillingEdge, RunsOnTheGivenStream) {
  constexpr int kRows = 1000, kCols = 777;
  auto rng = course::testing::case_rng();
  GuardedInput<float> in(course::random_floats(pixels(kRows, kCols), -1000.f, 1000.f, rng));
  GuardedOutput<float> out(pixels(kRows, kCols));
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { median_filter_5x5(in.data(), out.data(), kRows, kCols, s); },
      {course::testing::watched(out, "out")}));
  EXPECT_TRUE(course::testing::equal(register_spilling_reference(in.host(), kRows, kCols),
                                     out.download(), {{kRows, kCols}, "out (rows x cols)"}));
  EXPECT_TRUE(out.guards_intact("out (rows * cols)"));
}

TEST(RegisterSpillingEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: a result remembered from the first call (by pointer or by
  // size) fails the second check.
  constexpr int kRows = 300, kCols = 333;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> in(pixels(kRows, kCols));
  GuardedOutput<float> out(pixels(kRows, kCols));
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = course::random_floats(in.size(), -1000.f, 1000.f, rng);
    in.upload(in_host);
    out.repoison();
    median_filter_5x5(in.data(), out.data(), kRows, kCols, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(register_spilling_reference(in_host, kRows, kCols),
                                       out.download(), {{kRows, kCols}, "out after the " + call}));
  }
  EXPECT_TRUE(out.guards_intact("out after two calls"));
}

}  // namespace
