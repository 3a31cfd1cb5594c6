#include "stencil_constant.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "course/testing.h"
#include "stencil_constant_reference.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

// Random input values on both sides of the range a case uses: a kernel that reads in[-1] or
// in[n] instead of taking them as 0 adds them in, and the values show it.
constexpr std::size_t kOutside = 64;

// Nine terms of at most 1 in magnitude: the header's order matches the reference exactly and
// any other order stays within a few 1e-7; a wrong or misplaced coefficient or neighbour
// changes an output by the size of one term, about 0.25 on average.
constexpr course::Tolerance kTolerance{1e-5, 1e-5};

std::vector<float> random_coefficients(std::mt19937_64& rng) {
  return course::random_floats(kStencilConstantTaps, -1.f, 1.f, rng);
}

// Sets `coefficients`, runs the stencil on n random values on `stream` and checks the output,
// the guards around it and the input. `what` names the run in messages.
void check_stencil(std::size_t n, const std::vector<float>& coefficients, cudaStream_t stream,
                   std::mt19937_64& rng, const std::string& what = "out") {
  GuardedInput<float> in(course::random_floats(kOutside + n + kOutside, -1.f, 1.f, rng));
  GuardedOutput<float> out(n);

  // The header lets the caller reuse the host array at once: hand over a copy and spoil it.
  std::vector<float> handed_over = coefficients;
  stencil_constant_set_coefficients(handed_over.data());
  handed_over.assign(handed_over.size(), std::numeric_limits<float>::quiet_NaN());

  stencil_constant(in.data() + kOutside, out.data(), static_cast<int>(n), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EXPECT_TRUE(course::testing::close(
      stencil_constant_reference(in.host(), kOutside, n, coefficients), out.download(),
      kTolerance, {{}, what}));
  EXPECT_TRUE(out.guards_intact(what));
  EXPECT_TRUE(in.unchanged("in"));
}

class StencilConstant : public ::testing::TestWithParam<std::size_t> {};

TEST_P(StencilConstant, MatchesReference) {
  auto rng = course::testing::case_rng();
  check_stencil(GetParam(), random_coefficients(rng), nullptr, rng);
}

using course::testing::size_name;

// Sizes below the radius (both halos clipped), at and around the 1024-output tile a kernel is
// likely to use, the usual warp and block boundaries and primes; Large adds sizes that need
// more blocks than a grid-stride kernel would launch.
INSTANTIATE_TEST_SUITE_P(Small, StencilConstant,
                         ::testing::ValuesIn(course::testing::small_sizes(
                             {2, 3, 4, 5, 8, 9, 2047, 2048, 2049, 4099})),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, StencilConstant,
                         ::testing::ValuesIn(course::testing::large_sizes(
                             {(1 << 22) + 1, (1 << 24) + 5, 33554467})),
                         size_name);

TEST(StencilConstantEdge, UsesTheCoefficientsSetLast) {
  auto rng = course::testing::case_rng();
  check_stencil(5003, random_coefficients(rng), nullptr, rng, "out with the first coefficients");
  // A second, different set on the same sizes: a kernel with coefficients written into it, or
  // a set function that copies only once, gets this one wrong.
  check_stencil(5003, random_coefficients(rng), nullptr, rng, "out with the second coefficients");
  // A single 1 at index 7: out[i] = in[i + 3]. coefficients[k] multiplies in[i + k - 4], so a
  // kernel that runs the taps backwards returns in[i - 3] here.
  std::vector<float> shift(kStencilConstantTaps, 0.0f);
  shift[7] = 1.0f;
  check_stencil(5003, shift, nullptr, rng, "out with coefficients {0,0,0,0,0,0,0,1,0} (in[i+3])");
}

TEST(StencilConstantEdge, EmptyInputWritesNothingThenSmallWorks) {
  auto rng = course::testing::case_rng();
  constexpr int kCount = 64;
  const auto coefficients = random_coefficients(rng);
  GuardedInput<float> in(course::random_floats(kCount, -1.f, 1.f, rng));
  GuardedOutput<float> out(kCount);
  stencil_constant_set_coefficients(coefficients.data());
  stencil_constant(in.data(), out.data(), 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(out, "out after a call with n = 0"));
  // Then a real n = 10 call, so doing nothing at all does not pass.
  check_stencil(10, coefficients, nullptr, rng, "out after an n = 10 call");
}

TEST(StencilConstantEdge, CoefficientsAreInPlaceWhenTheSetCallReturns) {
  // A non-blocking stream: nothing orders it after the default stream, so the coefficients
  // must already be in place when the set function returns.
  auto rng = course::testing::case_rng();
  course::Stream stream;
  check_stencil(1000003, random_coefficients(rng), stream, rng);
}

TEST(StencilConstantEdge, RunsOnTheGivenStream) {
  constexpr int n = 1000003;
  auto rng = course::testing::case_rng();
  const auto coefficients = random_coefficients(rng);
  stencil_constant_set_coefficients(coefficients.data());
  GuardedInput<float> in(course::random_floats(kOutside + n + kOutside, -1.f, 1.f, rng));
  GuardedOutput<float> out(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { stencil_constant(in.data() + kOutside, out.data(), n, s); },
      {course::testing::watched(out, "out")}));
  EXPECT_TRUE(course::testing::close(
      stencil_constant_reference(in.host(), kOutside, n, coefficients), out.download(),
      kTolerance, {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
}

TEST(StencilConstantEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled, with the same coefficients: a result remembered from the first
  // call (by pointer or by size) fails the second check.
  constexpr int n = 100003;
  auto rng = course::testing::case_rng();
  const auto coefficients = random_coefficients(rng);
  stencil_constant_set_coefficients(coefficients.data());
  course::DeviceBuffer<float> in(n);
  GuardedOutput<float> out(n);
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = course::random_floats(n, -1.f, 1.f, rng);
    in.upload(in_host);
    out.repoison();
    stencil_constant(in.data(), out.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::close(stencil_constant_reference(in_host, 0, n, coefficients),
                                       out.download(), kTolerance, {{}, "out after the " + call}));
  }
  EXPECT_TRUE(out.guards_intact("out after two calls"));
}

}  // namespace
