#include "conv2d_constant.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "conv2d_constant_reference.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

struct Case {
  int width;
  int height;
  int radius;
};

std::vector<float> random_mask(int radius, std::mt19937_64& rng) {
  const auto side = static_cast<std::size_t>(2 * radius + 1);
  return course::random_floats(side * side, -1.f, 1.f, rng);
}

// Sets `mask`, filters a random image on `stream` and checks the output, the guards around it
// and the input. `what` names the run in messages.
void check_filter(const Case& c, const std::vector<float>& mask, cudaStream_t stream,
                  std::mt19937_64& rng, const std::string& what = "out (height x width)") {
  const std::size_t pixels = static_cast<std::size_t>(c.width) * c.height;
  GuardedInput<float> in(course::random_floats(pixels, -1.f, 1.f, rng));
  GuardedOutput<float> out(pixels);

  // The header lets the caller reuse the host array at once: hand over a copy and spoil it.
  std::vector<float> handed_over = mask;
  conv2d_constant_set_mask(handed_over.data(), c.radius);
  handed_over.assign(handed_over.size(), std::numeric_limits<float>::quiet_NaN());

  conv2d_constant(in.data(), out.data(), c.width, c.height, c.radius, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EXPECT_TRUE(course::testing::close(
      conv2d_constant_reference(in.host(), c.width, c.height, mask, c.radius), out.download(),
      conv2d_constant_tolerance(c.radius),
      {{static_cast<std::size_t>(c.height), static_cast<std::size_t>(c.width)}, what}));
  EXPECT_TRUE(out.guards_intact(what));
  EXPECT_TRUE(in.unchanged("in"));
}

class Conv2dConstant : public ::testing::TestWithParam<Case> {};

TEST_P(Conv2dConstant, MatchesReference) {
  auto rng = course::testing::case_rng();
  check_filter(GetParam(), random_mask(GetParam().radius, rng), nullptr, rng);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::to_string(info.param.width) + "x" + std::to_string(info.param.height) + "_r" +
         std::to_string(info.param.radius);
}

// Every radius; a single pixel (every neighbour is the pixel itself); single rows and
// columns; masks wider than the image (each neighbour clamped on both sides); partial 32-pixel
// tiles on every side; a warp, a block and one above and below; primes.
INSTANTIATE_TEST_SUITE_P(
    Small, Conv2dConstant,
    ::testing::Values(Case{1, 1, 1}, Case{1, 1, 7}, Case{1, 7, 2}, Case{7, 1, 3}, Case{2, 3, 5},
                      Case{31, 33, 1}, Case{32, 32, 2}, Case{33, 31, 3}, Case{5, 300, 7},
                      Case{300, 5, 6}, Case{1, 257, 4}, Case{257, 1, 7}, Case{64, 96, 5},
                      Case{127, 129, 7}, Case{255, 257, 2}, Case{97, 61, 4}),
    case_name);
// Many tiles in both directions; a row and a column of about a million pixels (more rows than
// gridDim.y allows with one block per row); a long, thin strip.
INSTANTIATE_TEST_SUITE_P(Large, Conv2dConstant,
                         ::testing::Values(Case{1025, 1023, 7}, Case{2048, 2048, 3},
                                           Case{3001, 997, 5}, Case{(1 << 20) - 3, 1, 2},
                                           Case{1, (1 << 20) - 3, 1}, Case{70001, 17, 6}),
                         case_name);

TEST(Conv2dConstantEdge, UsesTheMaskSetLast) {
  auto rng = course::testing::case_rng();
  const Case c{67, 45, 3};
  check_filter(c, random_mask(3, rng), nullptr, rng, "out with the first 7x7 mask");
  // Another mask of the same size: a kernel with weights written into it, or a set function
  // that copies only once, gets this one wrong.
  check_filter(c, random_mask(3, rng), nullptr, rng, "out with the second 7x7 mask");
  // A single 1 one column right of the centre: out(x, y) = in(min(x + 1, width - 1), y). A
  // kernel that flips the mask (a convolution, not a correlation) returns in(x - 1, y) here.
  std::vector<float> shift(9, 0.0f);
  shift[1 * 3 + 2] = 1.0f;
  check_filter({67, 45, 1}, shift, nullptr, rng, "out with a 3x3 mask {0,0,0, 0,0,1, 0,0,0}");
  // Then the largest mask after the smallest, and a small one after the largest: the
  // radius passed in must select the layout of the weights just set.
  check_filter({67, 45, kConv2dConstantMaxRadius}, random_mask(kConv2dConstantMaxRadius, rng),
               nullptr, rng, "out with a 15x15 mask set after a 3x3 one");
  check_filter({67, 45, 2}, random_mask(2, rng), nullptr, rng,
               "out with a 5x5 mask set after a 15x15 one");
}

TEST(Conv2dConstantEdge, EmptyImageWritesNothingThenSmallWorks) {
  constexpr int kCount = 64;
  auto rng = course::testing::case_rng();
  const auto mask = random_mask(2, rng);
  GuardedInput<float> in(course::random_floats(kCount, -1.f, 1.f, rng));
  GuardedOutput<float> out(kCount);
  conv2d_constant_set_mask(mask.data(), 2);
  conv2d_constant(in.data(), out.data(), 0, 5, 2, nullptr);
  conv2d_constant(in.data(), out.data(), 5, 0, 2, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(out, "out after calls with width = 0 or height = 0"));
  // Then a real 5 x 3 call, so doing nothing at all does not pass.
  check_filter({5, 3, 2}, mask, nullptr, rng, "out after a 5 x 3 call");
}

TEST(Conv2dConstantEdge, MaskIsInPlaceWhenTheSetCallReturns) {
  // A non-blocking stream: nothing orders it after the default stream, so the mask must
  // already be in place when the set function returns.
  auto rng = course::testing::case_rng();
  course::Stream stream;
  check_filter({1000, 777, 4}, random_mask(4, rng), stream, rng);
}

TEST(Conv2dConstantEdge, RunsOnTheGivenStream) {
  constexpr Case c{1000, 777, 4};
  auto rng = course::testing::case_rng();
  const auto mask = random_mask(c.radius, rng);
  conv2d_constant_set_mask(mask.data(), c.radius);
  GuardedInput<float> in(course::random_floats(c.width * c.height, -1.f, 1.f, rng));
  GuardedOutput<float> out(c.width * c.height);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) {
        conv2d_constant(in.data(), out.data(), c.width, c.height, c.radius, s);
      },
      {course::testing::watched(out, "out")}));
  EXPECT_TRUE(course::testing::close(
      conv2d_constant_reference(in.host(), c.width, c.height, mask, c.radius), out.download(),
      conv2d_constant_tolerance(c.radius), {{c.height, c.width}, "out (height x width)"}));
  EXPECT_TRUE(out.guards_intact("out (height x width)"));
}

TEST(Conv2dConstantEdge, CallsAgainWithNewInputs) {
  // The same image buffers refilled, with the same mask: a result remembered from the first
  // call (by pointer or by size) fails the second check.
  constexpr Case c{300, 200, 3};
  auto rng = course::testing::case_rng();
  const auto mask = random_mask(c.radius, rng);
  conv2d_constant_set_mask(mask.data(), c.radius);
  course::DeviceBuffer<float> in(c.width * c.height);
  GuardedOutput<float> out(c.width * c.height);
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = course::random_floats(in.size(), -1.f, 1.f, rng);
    in.upload(in_host);
    out.repoison();
    conv2d_constant(in.data(), out.data(), c.width, c.height, c.radius, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::close(
        conv2d_constant_reference(in_host, c.width, c.height, mask, c.radius), out.download(),
        conv2d_constant_tolerance(c.radius), {{c.height, c.width}, "out after the " + call}));
  }
  EXPECT_TRUE(out.guards_intact("out after two calls"));
}

}  // namespace
