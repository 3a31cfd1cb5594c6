#include "matmul_v2_shared_tiles.h"

#include <cstddef>

#include "course/check.h"

// One thread per element of C, one 32x32 tile of C per block: every element of A and B a
// block loads from global memory is then used by 32 threads out of shared memory.
constexpr int kTile = 32;

__global__ void matmul_v2_shared_tiles_kernel(const float* __restrict__ A,
                                              const float* __restrict__ B,
                                              float* __restrict__ C, int M, int N, int K) {
  // TODO: Declare two __shared__ kTile x kTile tiles. Walk k in steps of kTile:
  //       each thread loads one element of A's tile and one of B's (threadIdx.x along a row,
  //       so loads coalesce; 0 outside the matrix, so partial tiles add nothing), then
  //       __syncthreads(), then adds kTile products from the tiles, then __syncthreads()
  //       again before the next step overwrites them. Write C only inside M x N. Every
  //       thread must reach both barriers, including threads outside C.
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;
}

void matmul_v2_shared_tiles(const float* A, const float* B, float* C, int M, int N, int K,
                            cudaStream_t stream) {
  if (M <= 0 || N <= 0) return;
  // TODO: Launch kTile x kTile threads per block, one block per kTile x kTile tile
  //       of C (grid.x over N, grid.y over M, rounded up), on `stream`; CUDA_CHECK_LAUNCH().
  (void)A; (void)B; (void)C; (void)K; (void)stream;
}
