#include "cluster_histogram.h"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 512;
// A block's slice holds at most 2^13 bins (32 KiB): several blocks still fit an SM, and no
// launch needs more than the default 48 KiB of dynamic shared memory.
constexpr int kMaxSliceShift = 13;
// The largest portable cluster; 8 slices of 2^13 bins hold kClusterHistogramMaxBins.
constexpr int kMaxClusterBlocks = 8;
static_assert(kMaxClusterBlocks << kMaxSliceShift >= kClusterHistogramMaxBins,
              "a portable cluster must hold the largest table");

}  // namespace

// The table is split over the blocks of a cluster: block `rank` owns bins [rank << slice_shift,
// (rank + 1) << slice_shift) in its dynamic shared memory. Every block reads its grid-stride
// share of the input and adds each value to the slice of the block that owns it, through
// distributed shared memory; at the end each block adds its own slice to the global bins.
__global__ void __launch_bounds__(kThreads)
    cluster_histogram_kernel(const unsigned* __restrict__ in, std::size_t n,
                             unsigned* __restrict__ bins, int num_bins, int slice_shift) {
  // TODO: extern __shared__ unsigned slice[]; (1 << slice_shift words, sized at
  //       launch) and cg::cluster_group cluster = cg::this_cluster(). Zero your slice, then
  //       cluster.sync(). Grid-stride over the input: the value v belongs to block
  //       v >> slice_shift at offset v & ((1 << slice_shift) - 1); atomicAdd 1 there through
  //       cluster.map_shared_rank(slice, owner). cluster.sync() again, then add each non-zero
  //       bin of your slice to bins[(cluster.block_rank() << slice_shift) + b] (below num_bins).
  (void)in; (void)n; (void)bins; (void)num_bins; (void)slice_shift;
}

void cluster_histogram(const unsigned* in, std::size_t n, unsigned* bins, int num_bins,
                       cudaStream_t stream) {
  // TODO: Zero bins with cudaMemsetAsync on `stream` (the slices are added into it;
  //       this also writes every bin when n = 0). Pick the cluster (2 to 8 blocks) and the
  //       slice (a power of two up to 2^13 bins) that cover num_bins, then launch
  //       cluster_histogram_kernel with cudaLaunchKernelEx: a cudaLaunchConfig_t with the
  //       slice's bytes of dynamic shared memory, `stream`, and a cudaLaunchAttribute
  //       cudaLaunchAttributeClusterDimension of (cluster blocks, 1, 1); the grid a multiple
  //       of the cluster, as many clusters as cudaOccupancyMaxActiveClusters says fit at once.
  (void)in; (void)n; (void)bins; (void)num_bins; (void)stream;
}
