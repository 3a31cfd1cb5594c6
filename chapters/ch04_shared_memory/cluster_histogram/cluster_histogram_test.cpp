#include "cluster_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "cluster_histogram_reference.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;
using course::testing::GuardedOutput;

struct Case {
  int num_bins;
  std::size_t n;
  bool skewed;
};

// course::random_bin_values: under skew, the hot bin lies in one block's slice, which every
// block of a cluster then updates at once.
std::vector<unsigned> make_values(const Case& c, std::mt19937_64& rng) {
  return course::random_bin_values(c.n, c.num_bins, c.skewed, rng);
}

// Counts are integers: exact equality, bin by bin, with every bin written.
void check_counts(const Case& c, cudaStream_t stream) {
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(c, rng));
  GuardedOutput<unsigned> bins(static_cast<std::size_t>(c.num_bins));

  cluster_histogram(in.data(), c.n, bins.data(), c.num_bins, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EXPECT_TRUE(course::testing::equal(reference_histogram(in.host(), c.num_bins),
                                     bins.download(), {{}, "bins (count per bin)"}));
  EXPECT_TRUE(bins.guards_intact("bins (num_bins)"));
  EXPECT_TRUE(in.unchanged("in"));
}

class ClusterHistogram : public ::testing::TestWithParam<Case> {};

TEST_P(ClusterHistogram, ExactCounts) { check_counts(GetParam(), nullptr); }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.skewed ? "skewed" : "uniform") + "_bins" +
         std::to_string(info.param.num_bins) + "_n" + std::to_string(info.param.n);
}

// Bin counts of 1 and 2 (most blocks of a cluster own nothing), around a warp, around a slice
// of 2^13 bins and twice that (where a cluster grows from 2 to 4 and from 4 to 8 blocks), primes
// that no cluster size divides, and the largest table; n below and above the bin count, so some
// bins stay empty and must still be written as 0.
INSTANTIATE_TEST_SUITE_P(
    Small, ClusterHistogram,
    ::testing::Values(Case{1, 1000, false}, Case{2, 31, false}, Case{7, 257, true},
                      Case{32, 1, false}, Case{33, 5000, false}, Case{1000, 77777, true},
                      Case{8191, 4097, false}, Case{8192, 65537, false},
                      Case{8193, 20000, true}, Case{12289, 30011, false},
                      Case{16384, 50001, true}, Case{16385, 1025, false},
                      Case{32768, 99991, false}, Case{32769, 7, false},
                      Case{65521, 65537, true}, Case{65535, 1023, false},
                      Case{kClusterHistogramMaxBins, 100000, false}),
    case_name);
INSTANTIATE_TEST_SUITE_P(
    Large, ClusterHistogram,
    ::testing::Values(Case{kClusterHistogramMaxBins, (std::size_t{1} << 24) + 7, false},
                      Case{kClusterHistogramMaxBins, (std::size_t{1} << 24) + 7, true},
                      Case{32768, 10000019, true}, Case{12289, 5000011, false},
                      Case{1, 3000017, false}, Case{65521, 10000019, false}),
    case_name);

// The shared size lists over the largest table, uniform: every length from 1 up.
class ClusterHistogramSizes : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ClusterHistogramSizes, ExactCountsOfTheLargestTable) {
  check_counts({kClusterHistogramMaxBins, GetParam(), false}, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Small, ClusterHistogramSizes,
                         ::testing::ValuesIn(course::testing::small_sizes({8191, 8193})),
                         course::testing::size_name);
INSTANTIATE_TEST_SUITE_P(Large, ClusterHistogramSizes,
                         ::testing::ValuesIn(course::testing::large_sizes({33554467})),
                         course::testing::size_name);

TEST(ClusterHistogramEdge, EmptyInputWritesZeroBinsThenCounts) {
  auto rng = course::testing::case_rng();
  const int num_bins = 20000;
  GuardedInput<unsigned> in(make_values({num_bins, 1000, false}, rng));
  GuardedOutput<unsigned> bins(num_bins);
  cluster_histogram(in.data(), 0, bins.data(), num_bins, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(std::vector<unsigned>(num_bins, 0u), bins.download(),
                                     {{}, "bins after n = 0"}));
  EXPECT_TRUE(bins.guards_intact("bins after n = 0"));
  // Then real calls into the same bins: the counts replace the zeros, they do not add.
  cluster_histogram(in.data(), 1000, bins.data(), num_bins, nullptr);
  cluster_histogram(in.data(), 1000, bins.data(), num_bins, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(course::testing::equal(reference_histogram(in.host(), num_bins), bins.download(),
                                     {{}, "bins after two calls on the same 1000 values"}));
  EXPECT_TRUE(bins.guards_intact("bins after two calls"));
}

TEST(ClusterHistogramEdge, RunsOnTheGivenStream) {
  const Case c{kClusterHistogramMaxBins, 1000003, true};
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(c, rng));
  GuardedOutput<unsigned> bins(static_cast<std::size_t>(c.num_bins));
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { cluster_histogram(in.data(), c.n, bins.data(), c.num_bins, s); },
      {course::testing::watched(bins, "bins")}));
  EXPECT_TRUE(course::testing::equal(reference_histogram(in.host(), c.num_bins),
                                     bins.download(), {{}, "bins (count per bin)"}));
  EXPECT_TRUE(bins.guards_intact("bins (num_bins)"));
}

TEST(ClusterHistogramEdge, CallsAgainWithNewInputs) {
  // The same buffers refilled: counts remembered from the first call (by pointer or by size)
  // fail the second check.
  const Case c{kClusterHistogramMaxBins, 100003, true};
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<unsigned> in(c.n);
  GuardedOutput<unsigned> bins(static_cast<std::size_t>(c.num_bins));
  for (const std::string call : {"first call", "second call, in refilled"}) {
    const auto in_host = make_values(c, rng);
    in.upload(in_host);
    bins.repoison();
    cluster_histogram(in.data(), c.n, bins.data(), c.num_bins, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(course::testing::equal(reference_histogram(in_host, c.num_bins),
                                       bins.download(), {{}, "bins after the " + call}));
  }
  EXPECT_TRUE(bins.guards_intact("bins after two calls"));
}

// What a recorded kernel launch asked for: blocks per cluster (the launch's cluster attribute,
// or a __cluster_dims__ compiled into the kernel) and shared memory per block (static and
// dynamic).
struct ClusterShape {
  unsigned cluster_blocks = 1;
  std::size_t shared_bytes = 0;
  std::string text;
};

ClusterShape shape_of(cudaGraphNode_t node) {
  cudaKernelNodeParams params{};
  CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &params));
  cudaLaunchAttributeValue cluster{};
  CUDA_CHECK(
      cudaGraphKernelNodeGetAttribute(node, cudaLaunchAttributeClusterDimension, &cluster));
  ClusterShape shape;
  shape.cluster_blocks =
      std::max(1u, cluster.clusterDim.x * cluster.clusterDim.y * cluster.clusterDim.z);
  shape.shared_bytes = params.sharedMemBytes;
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, params.func) == cudaSuccess) {
    shape.shared_bytes += attributes.sharedSizeBytes;
    const int fixed = attributes.requiredClusterWidth * attributes.requiredClusterHeight *
                      attributes.requiredClusterDepth;
    if (fixed > 1)
      shape.cluster_blocks = std::max(shape.cluster_blocks, static_cast<unsigned>(fixed));
  } else {
    (void)cudaGetLastError();  // the launch's own attributes are all there is to go by
  }
  shape.text = "grid " + std::to_string(params.gridDim.x) + " blocks of " +
               std::to_string(params.blockDim.x * params.blockDim.y * params.blockDim.z) +
               " threads, clusters of " + std::to_string(shape.cluster_blocks) + ", " +
               std::to_string(shape.shared_bytes) + " bytes of shared memory per block";
  return shape;
}

// The counts cannot show where they were kept: global atomics give the same ones. The largest
// table (256 KiB) is more than one block's shared memory, so a count kept in shared memory is
// split over a cluster: some launch has clusters of several blocks, each block holding less
// than the table and the cluster's blocks together all of it. One ordinary call first does the
// one-time set-up (loading the kernel, occupancy queries) outside the recording.
TEST(ClusterHistogramLaunch, SplitsTheLargestTableOverACluster) {
  const Case c{kClusterHistogramMaxBins, std::size_t{1} << 22, false};
  auto rng = course::testing::case_rng();
  GuardedInput<unsigned> in(make_values(c, rng));
  GuardedOutput<unsigned> bins(static_cast<std::size_t>(c.num_bins));
  course::Stream stream;
  cluster_histogram(in.data(), c.n, bins.data(), c.num_bins, stream);
  stream.synchronize();
  course::testing::RecordedGraph recorded(stream, [&](cudaStream_t s) {
    cluster_histogram(in.data(), c.n, bins.data(), c.num_bins, s);
  });
  ASSERT_TRUE(recorded.problem().empty()) << "cluster_histogram: " << recorded.problem();
  const std::size_t table_bytes = sizeof(unsigned) * static_cast<std::size_t>(c.num_bins);
  bool split = false;
  std::string seen;
  for (cudaGraphNode_t node :
       course::testing::graph_nodes(recorded.graph(), cudaGraphNodeTypeKernel)) {
    const ClusterShape shape = shape_of(node);
    seen += "; " + shape.text;
    split = split || (shape.cluster_blocks > 1 && shape.shared_bytes < table_bytes &&
                      shape.cluster_blocks * shape.shared_bytes >= table_bytes);
  }
  EXPECT_TRUE(split) << "expected a kernel launched in clusters of several blocks whose shared "
                        "memory together holds the "
                     << table_bytes << "-byte table, each block a slice of it; found "
                     << recorded.census() << seen;
  // The recorded work, run again, still counts right.
  bins.repoison();
  recorded.replay(stream);
  stream.synchronize();
  EXPECT_TRUE(course::testing::equal(reference_histogram(in.host(), c.num_bins),
                                     bins.download(), {{}, "bins from the recorded launches"}));
}

}  // namespace
