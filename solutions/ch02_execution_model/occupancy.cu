#include "occupancy.h"

#include <algorithm>

#include "course/check.h"

double theoretical_occupancy(OccupancyKernel which, int block_size, std::size_t dynamic_smem_bytes) {
  // @begin-solution: Ask cudaOccupancyMaxActiveBlocksPerMultiprocessor how many blocks of
  // @hint: block_size threads (with dynamic_smem_bytes each) fit on one SM for
  // @hint: occupancy_kernel(which). Warps per block round up (a block of 33 threads takes two
  // @hint: warps). Divide the resident warps by maxThreadsPerMultiProcessor / warpSize from
  // @hint: the device's properties.
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  int warp_size = 0;
  int threads_per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&warp_size, cudaDevAttrWarpSize, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                    device));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, occupancy_kernel(which),
                                                           block_size, dynamic_smem_bytes));
  const int warps_per_block = (block_size + warp_size - 1) / warp_size;
  return static_cast<double>(blocks * warps_per_block) / (threads_per_sm / warp_size);
  // @skeleton: (void)which; (void)block_size; (void)dynamic_smem_bytes;
  // @skeleton: return 0.0;
  // @end-solution
}

LaunchConfig choose_launch_config(int n) {
  // @begin-solution: cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, 0, 0) with
  // @hint: kernel = streaming_scale_kernel() gives the block size with the highest occupancy and
  // @hint: the grid that fills every SM once at that occupancy. The kernel strides over the
  // @hint: grid, so a small multiple of that grid is enough; never more blocks than
  // @hint: ceil(n / block).
  int min_grid = 0;
  int block = 0;
  CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, streaming_scale_kernel(), 0, 0));
  block = std::max(32, block / 32 * 32);
  const long long needed = (static_cast<long long>(n) + block - 1) / block;
  LaunchConfig config;
  config.block = block;
  // Two waves: the second wave's blocks start as soon as any first-wave block ends.
  config.grid = static_cast<int>(std::max<long long>(1, std::min<long long>(needed, 2LL * min_grid)));
  return config;
  // @skeleton: (void)n;
  // @skeleton: return LaunchConfig{};
  // @end-solution
}
