// GoogleTest cases shared by every rung of the reduction ladder, compiled once per rung with
// COURSE_EXERCISE (the rung's launcher) and COURSE_EXERCISE_HEADER (its header) defined by the
// build, so every rung meets the same cases.
//
// Sizes sit around warp and block boundaries and powers of two, and every block size the API
// allows is exercised. Values are full-range ints, so any int accumulator overflows; the
// comparison is exact.
#include <gtest/gtest.h>

#include <climits>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "course/testing.h"
#include "reduce_ladder.h"

#if !defined(COURSE_EXERCISE) || !defined(COURSE_EXERCISE_HEADER)
#error "the build defines COURSE_EXERCISE and COURSE_EXERCISE_HEADER (see meson.build)"
#endif
#include COURSE_EXERCISE_HEADER

namespace {

using course::DeviceBuffer;
using course::testing::GuardedInput;

constexpr int kGuard = 16;  // poisoned elements after `partial` and after *out

using course::testing::host_sum;

// Runs the rung on in[misalign .. misalign + n) and checks the sum, the guards after the
// scratch buffer and after *out, and that the input is untouched.
void check_reduce(int n, int block_size, int misalign, int lo, int hi) {
  auto rng = course::testing::case_rng();
  const auto values = course::random_ints(static_cast<std::size_t>(n) + misalign, lo, hi, rng);
  GuardedInput<int> in(values);
  const std::size_t capacity = reduce_partial_capacity(n, block_size);
  auto partial = course::testing::poisoned_output<long long>(capacity + kGuard);
  auto out = course::testing::poisoned_output<long long>(1 + kGuard);

  COURSE_EXERCISE(in.data() + misalign, n, block_size, partial.data(), out.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  const auto got = out.download();
  const std::string what = "sum of n = " + std::to_string(n) +
                           " ints with block_size = " + std::to_string(block_size);
  EXPECT_TRUE(course::testing::equal(std::vector<long long>{host_sum(values, misalign)},
                                     std::vector<long long>{got[0]}, {{}, what}));
  EXPECT_TRUE(course::testing::poison_after(got, 1, "memory after *out (must not be written)"));
  const auto scratch = partial.download();
  EXPECT_TRUE(course::testing::poison_after(
      scratch, capacity,
      "memory after partial[reduce_partial_capacity(n, block_size)) (must not be written)"));
  EXPECT_TRUE(in.unchanged("in"));
}

using SizeAndBlock = std::tuple<int, int>;
class Reduce : public ::testing::TestWithParam<SizeAndBlock> {};

TEST_P(Reduce, SumsRandomInts) {
  check_reduce(std::get<0>(GetParam()), std::get<1>(GetParam()), 0, INT_MIN, INT_MAX);
}
TEST_P(Reduce, SumsFromAMisalignedPointer) {
  // Start one to three ints past a 16-byte boundary: vector loads must not assume alignment.
  const int n = std::get<0>(GetParam());
  check_reduce(n, std::get<1>(GetParam()), 1 + n % 3, INT_MIN, INT_MAX);
}

std::string case_name(const ::testing::TestParamInfo<SizeAndBlock>& info) {
  return "n_" + std::to_string(std::get<0>(info.param)) + "_block_" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Small, Reduce,
                         ::testing::Combine(::testing::Values(1, 7, 31, 32, 33, 63, 65, 255, 257,
                                                              1023, 1025, 4097, 65535, 100003),
                                            ::testing::Values(64, 256, 1024)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(SmallEveryBlockSize, Reduce,
                         ::testing::Combine(::testing::Values(2047, 8193),
                                            ::testing::Values(64, 128, 256, 512, 1024)),
                         case_name);
// More blocks than any sensible grid holds at once; (1 << 25) + 3 also needs 64-bit sums of
// partial sums.
INSTANTIATE_TEST_SUITE_P(Large, Reduce,
                         ::testing::Combine(::testing::Values((1 << 20) + 1, (1 << 24) - 1,
                                                              (1 << 25) + 3),
                                            ::testing::Values(64, 256, 1024)),
                         case_name);

TEST(ReduceEdge, ZeroElementsGiveZero) {
  auto partial = course::testing::poisoned_output<long long>(reduce_partial_capacity(0, 256));
  auto out = course::testing::poisoned_output<long long>(1);
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(4, INT_MIN, INT_MAX, rng));
  COURSE_EXERCISE(in.data(), 0, 256, partial.data(), out.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(std::vector<long long>{0}, out.download(),
                                     {{}, "sum of n = 0 ints"}));
}

TEST(ReduceEdge, LargePositiveValuesOverflowAnIntAccumulator) {
  // Every value is above 2^30, so any two of them overflow an int: partial sums must be held
  // in long long from the first addition on.
  for (const int block_size : {64, 128, 256, 512, 1024}) {
    SCOPED_TRACE("block_size = " + std::to_string(block_size));
    check_reduce(9999, block_size, 0, (1 << 30) + 1, INT_MAX);
    check_reduce(9999, block_size, 0, INT_MIN, -(1 << 30) - 1);
  }
}

TEST(ReduceEdge, RepeatedCallsDoNotAccumulate) {
  // The same out and scratch buffers twice: the second sum must not include the first.
  const int n = 123457;
  auto rng = course::testing::case_rng();
  const auto values = course::random_ints(n, INT_MIN, INT_MAX, rng);
  GuardedInput<int> in(values);
  auto partial = course::testing::poisoned_output<long long>(reduce_partial_capacity(n, 128));
  auto out = course::testing::poisoned_output<long long>(1);
  for (int call = 0; call < 2; ++call) {
    COURSE_EXERCISE(in.data(), n, 128, partial.data(), out.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(std::vector<long long>{host_sum(values, 0)},
                                       out.download(),
                                       {{}, "sum after call " + std::to_string(call + 1)}));
  }
}

TEST(ReduceEdge, RunsOnTheGivenStream) {
  // keeps_to_stream holds the stream shut while the launcher returns: a launch or a copy
  // anywhere else (the default stream, a stream of its own, a synchronous cudaMemcpy) writes
  // partial or *out meanwhile, and waiting on the stream is reported.
  const int n = (1 << 20) + 5;
  auto rng = course::testing::case_rng();
  const auto values = course::random_ints(n, INT_MIN, INT_MAX, rng);
  GuardedInput<int> in(values);
  const std::size_t capacity = reduce_partial_capacity(n, 256);
  auto partial = course::testing::poisoned_output<long long>(capacity);
  auto out = course::testing::poisoned_output<long long>(1);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) {
        COURSE_EXERCISE(in.data(), n, 256, partial.data(), out.data(), s);
      },
      {{partial.data(), capacity * sizeof(long long), "partial"},
       {out.data(), sizeof(long long), "*out"}}));
  EXPECT_TRUE(course::testing::equal(std::vector<long long>{host_sum(values, 0)},
                                     out.download(), {{}, "sum"}));
}

TEST(ReduceEdge, CallsAgainWithNewInputs) {
  // The same buffers with new contents: a launcher that remembers its last sum by pointer or
  // by size returns the first call's sum the second time.
  const int n = 123457;
  auto rng = course::testing::case_rng();
  DeviceBuffer<int> in(n);
  auto partial = course::testing::poisoned_output<long long>(reduce_partial_capacity(n, 128));
  auto out = course::testing::poisoned_output<long long>(1);
  for (const std::string call : {"first call", "second call"}) {
    const auto values = course::random_ints(n, INT_MIN, INT_MAX, rng);
    in.upload(values);
    out.fill_bytes(course::kPoisonByte);
    COURSE_EXERCISE(in.data(), n, 128, partial.data(), out.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(std::vector<long long>{host_sum(values, 0)},
                                       out.download(), {{}, "sum after the " + call}));
  }
}

TEST(ReduceEdge, RejectsUnsupportedBlockSizes) {
  auto partial = course::testing::poisoned_output<long long>(64);
  auto out = course::testing::poisoned_output<long long>(1);
  auto rng = course::testing::case_rng();
  GuardedInput<int> in(course::random_ints(100, INT_MIN, INT_MAX, rng));
  for (const int block_size : {0, 32, 96, 2048}) {
    EXPECT_THROW(COURSE_EXERCISE(in.data(), 100, block_size, partial.data(), out.data(), nullptr),
                 std::invalid_argument)
        << "block_size = " << block_size;
  }
  // The same buffers with a supported size then work, so a launcher that always throws fails.
  check_reduce(100, 64, 0, INT_MIN, INT_MAX);
}

}  // namespace
