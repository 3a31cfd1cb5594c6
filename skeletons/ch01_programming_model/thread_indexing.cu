#include "thread_indexing.h"

#include <cstddef>

#include "course/check.h"

// 1D: only the x components matter; the position is the global x coordinate itself.
__global__ void record_thread_ranks_1d_kernel(int* block_rank, int* thread_rank) {
  // TODO: Compute the global x coordinate from blockIdx.x, blockDim.x and
  //       threadIdx.x, and write the block's and the thread's rank at that position.
  (void)block_rank; (void)thread_rank;
}

// 2D: rows of width gridDim.x * blockDim.x; y selects the row.
__global__ void record_thread_ranks_2d_kernel(int* block_rank, int* thread_rank) {
  // TODO: Compute the global (x, y), the row width of the whole launch, the
  //       row-major position y * width + x, and the linear ranks of the block in the grid
  //       and of the thread in its block (x varies fastest in both).
  (void)block_rank; (void)thread_rank;
}

// 3D: planes of height * width elements; z selects the plane.
__global__ void record_thread_ranks_3d_kernel(int* block_rank, int* thread_rank) {
  // TODO: As in 2D with one more level: position = (z * height + y) * width + x,
  //       block rank = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x, and
  //       the thread's rank in its block likewise from threadIdx and blockDim.
  (void)block_rank; (void)thread_rank;
}

// The grid covers the output exactly (one thread per element), so the kernels need no bounds
// check; each launcher only forwards the shape it was given.
void record_thread_ranks_1d(dim3 grid, dim3 block, int* block_rank, int* thread_rank,
                            cudaStream_t stream) {
  // TODO: Launch record_thread_ranks_1d_kernel with this grid and block on
  //       `stream`, then CUDA_CHECK_LAUNCH().
  (void)grid; (void)block; (void)block_rank; (void)thread_rank; (void)stream;
}

void record_thread_ranks_2d(dim3 grid, dim3 block, int* block_rank, int* thread_rank,
                            cudaStream_t stream) {
  // TODO: Launch record_thread_ranks_2d_kernel the same way.
  (void)grid; (void)block; (void)block_rank; (void)thread_rank; (void)stream;
}

void record_thread_ranks_3d(dim3 grid, dim3 block, int* block_rank, int* thread_rank,
                            cudaStream_t stream) {
  // TODO: Launch record_thread_ranks_3d_kernel the same way.
  (void)grid; (void)block; (void)block_rank; (void)thread_rank; (void)stream;
}
