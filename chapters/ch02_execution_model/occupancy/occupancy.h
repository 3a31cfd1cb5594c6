// Exercise ch02 / occupancy: theoretical occupancy from the occupancy API, and a launch
// configuration chosen with it.
//
// Frozen API.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// Course-owned kernels whose occupancy is limited by different resources (defined in
// occupancy_baseline.cu; occupancy_kernel returns the address the occupancy API takes).
enum class OccupancyKernel {
  kLight,          // few registers, no shared memory: limited by threads and blocks per SM
  kRegisterHeavy,  // many registers per thread: limited by the register file
  kSharedHeavy,    // 36 KiB of static shared memory per block: limited by shared memory
};
const void* occupancy_kernel(OccupancyKernel which);

// How blocks and threads are launched.
struct LaunchConfig {
  int grid = 0;   // blocks
  int block = 0;  // threads per block
};

// Course-owned: y[i] = 2 x[i] + 1 for i in [0, n) with a grid-stride loop, launched with
// `config` on `stream`. One load, a multiply-add and one store per element: its speed depends
// on keeping enough loads in flight, so on occupancy and on the grid's size.
void streaming_scale(LaunchConfig config, const float* x, float* y, int n, cudaStream_t stream);
const void* streaming_scale_kernel();

// --- yours (occupancy.cu) ------------------------------------------------------------------

// The theoretical occupancy of `which` on the current device: resident warps per SM, when
// blocks of block_size threads each use dynamic_smem_bytes of dynamic shared memory, divided
// by the SM's maximum resident warps. A value in [0, 1]. block_size is at least 1 and at most
// the kernel's maxThreadsPerBlock (cudaFuncGetAttributes); dynamic_smem_bytes keeps the total
// within the default 48 KiB per block.
double theoretical_occupancy(OccupancyKernel which, int block_size, std::size_t dynamic_smem_bytes);

// A launch configuration for streaming_scale over n >= 1 elements: a block size the kernel can
// run (multiple of 32, at most 1024) and a grid of at least one block that keeps every SM busy
// when n is large, without launching blocks that would have nothing to do when n is small.
LaunchConfig choose_launch_config(int n);
