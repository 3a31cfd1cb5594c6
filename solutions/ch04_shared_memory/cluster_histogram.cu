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
  // @begin-solution: extern __shared__ unsigned slice[]; (1 << slice_shift words, sized at
  // @hint: launch) and cg::cluster_group cluster = cg::this_cluster(). Zero your slice, then
  // @hint: cluster.sync(). Grid-stride over the input: the value v belongs to block
  // @hint: v >> slice_shift at offset v & ((1 << slice_shift) - 1); atomicAdd 1 there through
  // @hint: cluster.map_shared_rank(slice, owner). cluster.sync() again, then add each non-zero
  // @hint: bin of your slice to bins[(cluster.block_rank() << slice_shift) + b] (below num_bins).
  extern __shared__ unsigned slice[];
  const cg::cluster_group cluster = cg::this_cluster();
  const int slice_bins = 1 << slice_shift;
  for (int b = threadIdx.x; b < slice_bins; b += blockDim.x) slice[b] = 0;
  // Other blocks add to this slice: it must be zeroed, and every block of the cluster must be
  // running, before the first of them does.
  cluster.sync();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::size_t i = first; i < n; i += stride) {
    const unsigned value = in[i];
    unsigned* owner = cluster.map_shared_rank(slice, static_cast<int>(value >> slice_shift));
    atomicAdd(owner + (value & static_cast<unsigned>(slice_bins - 1)), 1u);
  }
  // Every block's additions have landed before this block reads its slice, and no block exits
  // (its shared memory gone) while another may still be adding to it.
  cluster.sync();
  const int base = static_cast<int>(cluster.block_rank()) << slice_shift;
  for (int b = threadIdx.x; b < slice_bins && base + b < num_bins; b += blockDim.x)
    if (slice[b] != 0) atomicAdd(&bins[base + b], slice[b]);
  // @skeleton: (void)in; (void)n; (void)bins; (void)num_bins; (void)slice_shift;
  // @end-solution
}

void cluster_histogram(const unsigned* in, std::size_t n, unsigned* bins, int num_bins,
                       cudaStream_t stream) {
  // @begin-solution: Zero bins with cudaMemsetAsync on `stream` (the slices are added into it;
  // @hint: this also writes every bin when n = 0). Pick the cluster (2 to 8 blocks) and the
  // @hint: slice (a power of two up to 2^13 bins) that cover num_bins, then launch
  // @hint: cluster_histogram_kernel with cudaLaunchKernelEx: a cudaLaunchConfig_t with the
  // @hint: slice's bytes of dynamic shared memory, `stream`, and a cudaLaunchAttribute
  // @hint: cudaLaunchAttributeClusterDimension of (cluster blocks, 1, 1); the grid a multiple
  // @hint: of the cluster, as many clusters as cudaOccupancyMaxActiveClusters says fit at once.
  CUDA_CHECK(cudaMemsetAsync(bins, 0, sizeof(unsigned) * static_cast<std::size_t>(num_bins),
                             stream));
  if (n == 0) return;
  // The fewest blocks per cluster whose slices of at most 2^kMaxSliceShift bins cover the
  // table (every block but its owner reaches a bin remotely, so fewer is better), then the
  // smallest power-of-two slice for that many blocks.
  int cluster_blocks = 2;
  while (cluster_blocks < kMaxClusterBlocks && (cluster_blocks << kMaxSliceShift) < num_bins)
    cluster_blocks *= 2;
  int slice_shift = 0;
  while ((cluster_blocks << slice_shift) < num_bins) ++slice_shift;

  cudaLaunchAttribute cluster_dim{};
  cluster_dim.id = cudaLaunchAttributeClusterDimension;
  cluster_dim.val.clusterDim.x = static_cast<unsigned>(cluster_blocks);
  cluster_dim.val.clusterDim.y = 1;
  cluster_dim.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = sizeof(unsigned) << slice_shift;
  config.stream = stream;
  config.attrs = &cluster_dim;
  config.numAttrs = 1;

  // Each cluster zeroes and merges the whole table once, so the grid is one wave of the
  // clusters that fit the GPU at once (asked once per shape: the answer does not change, and
  // the query would otherwise sit in every call).
  static int active_clusters[4][kMaxSliceShift + 1] = {};
  int cluster_log = 0;
  while ((2 << cluster_log) < cluster_blocks) ++cluster_log;
  int& active = active_clusters[cluster_log][slice_shift];
  if (active == 0) {
    config.gridDim = dim3(static_cast<unsigned>(cluster_blocks));
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&active, cluster_histogram_kernel, &config));
    active = std::max(active, 1);
  }
  const std::size_t needed_blocks = (n + kThreads - 1) / kThreads;
  const std::size_t needed_clusters =
      (needed_blocks + static_cast<std::size_t>(cluster_blocks) - 1) /
      static_cast<std::size_t>(cluster_blocks);
  const std::size_t clusters = std::min(needed_clusters, static_cast<std::size_t>(active));
  config.gridDim = dim3(static_cast<unsigned>(clusters) * static_cast<unsigned>(cluster_blocks));
  CUDA_CHECK(cudaLaunchKernelEx(&config, cluster_histogram_kernel, in, n, bins, num_bins,
                                slice_shift));
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)n; (void)bins; (void)num_bins; (void)stream;
  // @end-solution
}
