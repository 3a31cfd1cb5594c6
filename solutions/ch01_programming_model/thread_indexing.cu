#include "thread_indexing.h"

#include <cstddef>

#include "course/check.h"

// 1D: only the x components matter; the position is the global x coordinate itself.
__global__ void record_thread_ranks_1d_kernel(int* block_rank, int* thread_rank) {
  // @begin-solution: Compute the global x coordinate from blockIdx.x, blockDim.x and
  // @hint: threadIdx.x, and write the block's and the thread's rank at that position.
  const std::size_t x = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  block_rank[x] = static_cast<int>(blockIdx.x);
  thread_rank[x] = static_cast<int>(threadIdx.x);
  // @skeleton: (void)block_rank; (void)thread_rank;
  // @end-solution
}

// 2D: rows of width gridDim.x * blockDim.x; y selects the row.
__global__ void record_thread_ranks_2d_kernel(int* block_rank, int* thread_rank) {
  // @begin-solution: Compute the global (x, y), the row width of the whole launch, the
  // @hint: row-major position y * width + x, and the linear ranks of the block in the grid
  // @hint: and of the thread in its block (x varies fastest in both).
  const std::size_t x = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t y = std::size_t{blockIdx.y} * blockDim.y + threadIdx.y;
  const std::size_t width = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t position = y * width + x;
  block_rank[position] = static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x);
  thread_rank[position] = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  // @skeleton: (void)block_rank; (void)thread_rank;
  // @end-solution
}

// 3D: planes of height * width elements; z selects the plane.
__global__ void record_thread_ranks_3d_kernel(int* block_rank, int* thread_rank) {
  // @begin-solution: As in 2D with one more level: position = (z * height + y) * width + x,
  // @hint: block rank = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x, and
  // @hint: the thread's rank in its block likewise from threadIdx and blockDim.
  const std::size_t x = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::size_t y = std::size_t{blockIdx.y} * blockDim.y + threadIdx.y;
  const std::size_t z = std::size_t{blockIdx.z} * blockDim.z + threadIdx.z;
  const std::size_t width = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t height = std::size_t{gridDim.y} * blockDim.y;
  const std::size_t position = (z * height + y) * width + x;
  block_rank[position] =
      static_cast<int>((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x);
  thread_rank[position] =
      static_cast<int>((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x);
  // @skeleton: (void)block_rank; (void)thread_rank;
  // @end-solution
}

// The grid covers the output exactly (one thread per element), so the kernels need no bounds
// check; each launcher only forwards the shape it was given.
void record_thread_ranks_1d(dim3 grid, dim3 block, int* block_rank, int* thread_rank,
                            cudaStream_t stream) {
  // @begin-solution: Launch record_thread_ranks_1d_kernel with this grid and block on
  // @hint: `stream`, then CUDA_CHECK_LAUNCH().
  record_thread_ranks_1d_kernel<<<grid, block, 0, stream>>>(block_rank, thread_rank);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)grid; (void)block; (void)block_rank; (void)thread_rank; (void)stream;
  // @end-solution
}

void record_thread_ranks_2d(dim3 grid, dim3 block, int* block_rank, int* thread_rank,
                            cudaStream_t stream) {
  // @begin-solution: Launch record_thread_ranks_2d_kernel the same way.
  record_thread_ranks_2d_kernel<<<grid, block, 0, stream>>>(block_rank, thread_rank);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)grid; (void)block; (void)block_rank; (void)thread_rank; (void)stream;
  // @end-solution
}

void record_thread_ranks_3d(dim3 grid, dim3 block, int* block_rank, int* thread_rank,
                            cudaStream_t stream) {
  // @begin-solution: Launch record_thread_ranks_3d_kernel the same way.
  record_thread_ranks_3d_kernel<<<grid, block, 0, stream>>>(block_rank, thread_rank);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)grid; (void)block; (void)block_rank; (void)thread_rank; (void)stream;
  // @end-solution
}
