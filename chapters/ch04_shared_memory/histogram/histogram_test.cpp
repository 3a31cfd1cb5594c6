#include "histogram.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

struct Case {
  int num_bins;
  std::size_t n;
  bool skewed;
};

// Uniform or skewed (course::random_bin_values).
std::vector<unsigned> make_values(const Case& c, std::mt19937_64& rng) {
  return course::random_bin_values(c.n, c.num_bins, c.skewed, rng);
}

std::vector<unsigned> host_histogram(const std::vector<unsigned>& values, int num_bins) {
  std::vector<unsigned> bins(num_bins, 0u);
  for (unsigned v : values) ++bins[v];
  return bins;
}

void check_histogram(const Case& c, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(c, rng));
  GuardedOutput<unsigned> bins(static_cast<std::size_t>(c.num_bins));

  histogram(in.data(), c.n, bins.data(), c.num_bins, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EXPECT_TRUE(course::testing::equal(host_histogram(in.host(), c.num_bins), bins.download(),
                                     {{}, "bins (count per bin)"}));
  EXPECT_TRUE(bins.guards_intact("bins (num_bins)"));
  EXPECT_TRUE(in.unchanged("in"));
}

class Histogram : public ::testing::TestWithParam<Case> {};

TEST_P(Histogram, ExactCounts) { check_histogram(GetParam(), nullptr); }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.skewed ? "skewed" : "uniform") + "_bins" +
         std::to_string(info.param.num_bins) + "_n" + std::to_string(info.param.n);
}

// Bin counts of 1 (every value in one bin), around a warp and a block, a few thousand, past
// 48 KiB of shared memory (12288 bins) and past what any block can hold (1 << 20 bins); n below
// and above the bin count, so some bins stay empty and must still be written as 0.
INSTANTIATE_TEST_SUITE_P(
    Small, Histogram,
    ::testing::Values(Case{1, 1000, false}, Case{2, 31, false}, Case{7, 257, false},
                      Case{32, 1, false}, Case{33, 5000, false}, Case{255, 100003, false},
                      Case{256, 65536, true}, Case{257, 12345, false}, Case{1000, 77777, true},
                      Case{4096, 100000, false}, Case{4097, 5000, true},
                      Case{20000, 50001, false}, Case{70001, 30000, true}),
    case_name);
INSTANTIATE_TEST_SUITE_P(
    Large, Histogram,
    ::testing::Values(Case{256, (1u << 24) + 7, false}, Case{256, (1u << 24) + 7, true},
                      Case{4096, 10000019, false}, Case{4096, 10000019, true},
                      Case{1, 3000017, false}, Case{16384, 3000017, false},
                      Case{kHistogramMaxBins, 5000011, true}),
    case_name);

TEST(HistogramEdge, EmptyInputWritesZeroBinsThenCounts) {
  auto rng = course::testing::case_rng();
  const int num_bins = 300;
  GuardedInput<unsigned> in(make_values({num_bins, 1000, false}, rng));
  GuardedOutput<unsigned> bins(num_bins);
  histogram(in.data(), 0, bins.data(), num_bins, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(std::vector<unsigned>(num_bins, 0u), bins.download(),
                                     {{}, "bins after n = 0"}));
  EXPECT_TRUE(bins.guards_intact("bins after n = 0"));
  // Then a real call into the same bins: the counts replace the zeros, they do not add.
  histogram(in.data(), 1000, bins.data(), num_bins, nullptr);
  histogram(in.data(), 1000, bins.data(), num_bins, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(host_histogram(in.host(), num_bins), bins.download(),
                                     {{}, "bins after two calls on the same 1000 values"}));
  EXPECT_TRUE(bins.guards_intact("bins after two calls"));
}

TEST(HistogramEdge, RunsOnTheGivenStream) {
  const Case c{512, 1000003, true};
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(c, rng));
  GuardedOutput<unsigned> bins(static_cast<std::size_t>(c.num_bins));
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { histogram(in.data(), c.n, bins.data(), c.num_bins, s); },
      {course::testing::watched(bins, "bins")}));
  EXPECT_TRUE(course::testing::equal(host_histogram(in.host(), c.num_bins), bins.download(),
                                     {{}, "bins (count per bin)"}));
  EXPECT_TRUE(bins.guards_intact("bins (num_bins)"));
}

TEST(HistogramEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: counts remembered from the first call (by pointer or by size)
  // fail the second check.
  const Case c{512, 100003, true};
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<unsigned> in(c.n);
  GuardedOutput<unsigned> bins(static_cast<std::size_t>(c.num_bins));
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = make_values(c, rng);
    in.upload(in_host);
    bins.repoison();
    histogram(in.data(), c.n, bins.data(), c.num_bins, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(host_histogram(in_host, c.num_bins), bins.download(),
                                       {{}, "bins after the " + call}));
  }
  EXPECT_TRUE(bins.guards_intact("bins after two calls"));
}

}  // namespace
