#include "nested_launch.h"

#include "course/check.h"

// One grid of the tree: every thread records itself, and thread 0 of each block starts the
// next depth. root_block is the chain's depth-0 block (unused at depth 0, where it is the
// block itself).
__global__ void nested_launch_kernel(LaunchRecord* records, int* count, int depth,
                                     int root_block, int max_depth) {
  // @begin-solution: Take a slot with atomicAdd(count, 1) and write this thread's record
  // @hint: there. Then thread 0 alone launches this same kernel from the device, as
  // @hint: <<<1, blockDim.x / 2, 0, cudaStreamFireAndForget>>>, with depth + 1 and the
  // @hint: chain's root block, while depth < max_depth and the half is at least 1 thread.
  const int root = depth == 0 ? static_cast<int>(blockIdx.x) : root_block;
  const int slot = atomicAdd(count, 1);
  records[slot] = LaunchRecord{depth, root, static_cast<int>(blockIdx.x),
                               static_cast<int>(threadIdx.x)};
  const unsigned int child_threads = blockDim.x / 2;
  if (threadIdx.x == 0 && depth < max_depth && child_threads >= 1) {
    // Fire-and-forget: the parent never waits for the child, and the host still sees the
    // child as part of the grid it launched, complete only when the whole chain is.
    nested_launch_kernel<<<1, child_threads, 0, cudaStreamFireAndForget>>>(
        records, count, depth + 1, root, max_depth);
  }
  // @skeleton: (void)records; (void)count; (void)depth; (void)root_block; (void)max_depth;
  // @end-solution
}

void record_nested_launches(LaunchRecord* records, int* count, int blocks, int threads,
                            int max_depth, cudaStream_t stream) {
  // @begin-solution: Launch the depth-0 grid, blocks x threads, on `stream`; do not wait.
  nested_launch_kernel<<<blocks, threads, 0, stream>>>(records, count, 0, 0, max_depth);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)records; (void)count; (void)blocks; (void)threads; (void)max_depth;
  // @skeleton: (void)stream;
  // @end-solution
}
