#include "occupancy.h"

#include <algorithm>

#include "course/check.h"

double theoretical_occupancy(OccupancyKernel which, int block_size, std::size_t dynamic_smem_bytes) {
  // TODO: Ask cudaOccupancyMaxActiveBlocksPerMultiprocessor how many blocks of
  //       block_size threads (with dynamic_smem_bytes each) fit on one SM for
  //       occupancy_kernel(which). Warps per block round up (a block of 33 threads takes two
  //       warps). Divide the resident warps by maxThreadsPerMultiProcessor / warpSize from
  //       the device's properties.
  (void)which; (void)block_size; (void)dynamic_smem_bytes;
  return 0.0;
}

LaunchConfig choose_launch_config(int n) {
  // TODO: cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, kernel, 0, 0) with
  //       kernel = streaming_scale_kernel() gives the block size with the highest occupancy and
  //       the grid that fills every SM once at that occupancy. The kernel strides over the
  //       grid, so a small multiple of that grid is enough; never more blocks than
  //       ceil(n / block).
  (void)n;
  return LaunchConfig{};
}
