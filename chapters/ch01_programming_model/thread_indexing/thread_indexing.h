// Exercise ch01 / thread_indexing: every thread of a launch finds its place in the grid.
//
// A launch of `grid` blocks of `block` threads covers an extent of
//   width  = grid.x * block.x,  height = grid.y * block.y,  depth = grid.z * block.z
// threads. A thread's global coordinates are
//   gx = blockIdx.x * blockDim.x + threadIdx.x   (likewise gy with .y, gz with .z)
// and its position in the extent, stored row-major (x fastest, then y, then z), is
//   position = (gz * height + gy) * width + gx.
// Each thread writes, at its position,
//   block_rank[position]  = the linear index of its block in the grid:
//                           (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x
//   thread_rank[position] = the linear index of the thread in its block:
//                           (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x
// so the test can tell which thread wrote which element. The two values differ from the
// position itself, so writing the right numbers at the wrong place does not pass.
//
// Frozen API. block_rank and thread_rank are device pointers to exactly width*height*depth
// ints (no spare room: a write past the end is a memory error). Three launchers, one per
// dimensionality, each launching its own kernel with exactly this grid and block:
//   record_thread_ranks_1d: grid.y = grid.z = block.y = block.z = 1
//   record_thread_ranks_2d: grid.z = block.z = 1
//   record_thread_ranks_3d: any shape the device accepts
// The work is enqueued on `stream`; the functions return without waiting for it.
#pragma once

#include <cuda_runtime.h>

void record_thread_ranks_1d(dim3 grid, dim3 block, int* block_rank, int* thread_rank,
                            cudaStream_t stream);
void record_thread_ranks_2d(dim3 grid, dim3 block, int* block_rank, int* thread_rank,
                            cudaStream_t stream);
void record_thread_ranks_3d(dim3 grid, dim3 block, int* block_rank, int* thread_rank,
                            cudaStream_t stream);
