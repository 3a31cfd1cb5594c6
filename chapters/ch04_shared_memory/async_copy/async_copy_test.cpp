#include "async_copy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "async_copy_reference.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

struct Case {
  int n;
  int in_offset;   // floats from the start of the input allocation (breaks 16-byte alignment)
  int out_offset;  // floats past a 256-byte boundary for the output
};

// Input values after the range a case uses.
constexpr int kInputTail = 64;

// Nine terms of at most 1 in magnitude with weights summing to 1: float rounding stays near
// 1e-7; a missing or misplaced neighbour changes the value by at least 1/25 of it.
constexpr course::Tolerance kTolerance{1e-5, 1e-6};

void check_stencil(const Case& c, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  // The input allocation has kInputTail extra values after the used range: a kernel reading past
  // in[n) would add them in (the stencil treats everything outside [0, n) as 0).
  GuardedInput<float> in(course::random_floats(
      static_cast<std::size_t>(c.in_offset) + c.n + kInputTail, -1.f, 1.f, rng));
  // out_offset more floats of front guard put out that far past a 16-byte boundary.
  GuardedOutput<float> out(static_cast<std::size_t>(c.n),
                           GuardedOutput<float>::kGuard + static_cast<std::size_t>(c.out_offset));

  async_copy(in.data() + c.in_offset, out.data(), c.n, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EXPECT_TRUE(course::testing::close(async_copy_reference(in.host(), c.in_offset, c.n),
                                     out.download(), kTolerance, {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_TRUE(in.unchanged("in"));
}

class AsyncCopy : public ::testing::TestWithParam<Case> {};

TEST_P(AsyncCopy, MatchesDoublePrecisionReference) { check_stencil(GetParam(), nullptr); }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return "n" + std::to_string(info.param.n) + "_in" + std::to_string(info.param.in_offset) +
         "_out" + std::to_string(info.param.out_offset);
}

// n smaller than the radius (both halos clipped), around a warp, a block and the common tile
// sizes, primes, and inputs starting 1, 2 or 3 floats past a 16-byte boundary, so that copies
// in 16-byte pieces must handle the unaligned ends.
INSTANTIATE_TEST_SUITE_P(
    Small, AsyncCopy,
    ::testing::Values(Case{1, 0, 0}, Case{3, 1, 0}, Case{4, 0, 0}, Case{8, 0, 3}, Case{9, 2, 1},
                      Case{31, 0, 0}, Case{33, 3, 0}, Case{255, 0, 0}, Case{257, 1, 1},
                      Case{1023, 0, 0}, Case{1025, 2, 0}, Case{2047, 0, 0}, Case{2048, 0, 0},
                      Case{2049, 1, 2}, Case{4105, 3, 3}, Case{65537, 0, 0},
                      Case{100003, 1, 0}),
    case_name);
INSTANTIATE_TEST_SUITE_P(Large, AsyncCopy,
                         ::testing::Values(Case{(1 << 24) + 5, 0, 0}, Case{(1 << 24) - 3, 1, 3},
                                           Case{33554467, 2, 0}),
                         case_name);

TEST(AsyncCopyEdge, EmptyInputWritesNothingThenSmallWorks) {
  auto rng = course::testing::case_rng();
  constexpr int kCount = 64;
  GuardedInput<float> in(course::random_floats(kCount, -1.f, 1.f, rng));
  GuardedOutput<float> out(kCount);
  async_copy(in.data(), out.data(), 0, nullptr);
  EXPECT_TRUE(course::testing::wrote_nothing(out, "out after a call with n = 0"));
  // The same buffers then take a real n = 10 call, so doing nothing does not pass.
  async_copy(in.data(), out.data(), 10, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto all = out.download();
  EXPECT_TRUE(course::testing::close(async_copy_reference(in.host(), 0, 10),
                                     std::vector<float>(all.begin(), all.begin() + 10),
                                     kTolerance, {{}, "out after an n = 10 call"}));
  EXPECT_TRUE(
      course::testing::poison_after(all, 10, "memory after out[10) (must not be written)"));
  EXPECT_TRUE(out.guards_intact("out after an n = 10 call"));
}

TEST(AsyncCopyEdge, RunsOnTheGivenStream) {
  constexpr int n = 1000003;
  constexpr int kInOffset = 1;  // unaligned, as most cases are
  auto rng = course::testing::case_rng();
  GuardedInput<float> in(course::random_floats(kInOffset + n + kInputTail, -1.f, 1.f, rng));
  GuardedOutput<float> out(n);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { async_copy(in.data() + kInOffset, out.data(), n, s); },
      {course::testing::watched(out, "out")}));
  EXPECT_TRUE(course::testing::close(async_copy_reference(in.host(), kInOffset, n),
                                     out.download(), kTolerance, {{}, "out"}));
  EXPECT_TRUE(out.guards_intact("out"));
}

TEST(AsyncCopyEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: a result remembered from the first call (by pointer or by
  // size) fails the second check.
  constexpr int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<float> in(n);
  GuardedOutput<float> out(n);
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = course::random_floats(n, -1.f, 1.f, rng);
    in.upload(in_host);
    out.repoison();
    async_copy(in.data(), out.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::close(async_copy_reference(in_host, 0, n), out.download(),
                                       kTolerance, {{}, "out after the " + call}));
  }
  EXPECT_TRUE(out.guards_intact("out after two calls"));
}

}  // namespace
