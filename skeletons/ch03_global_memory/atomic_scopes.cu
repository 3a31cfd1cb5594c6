#include "atomic_scopes.h"

#include <cuda/atomic>

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"

constexpr int kThreads = 256;
// One private bin per thread: each thread clears one and merges one.
static_assert(kThreads == kScopeBins, "the block-scope kernel gives every thread one bin");

// How many blocks of kThreads threads of `kernel` fit on the GPU at once.
template <class Kernel>
int resident_blocks(Kernel kernel) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  return per_sm * course::sm_count();
}

// Blocks for n values: one per kThreads values, but no more than `resident` (the blocks that
// fit on the GPU at once); the kernels loop over whatever lies beyond.
int blocks_for(int n, int resident) {
  const int wanted = static_cast<int>((static_cast<std::size_t>(n) + kThreads - 1) / kThreads);
  return std::min(wanted, resident);
}

// The first value of this thread and the distance to its next one, in a grid-stride loop.
__device__ __forceinline__ std::size_t first_index() {
  return static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
}
__device__ __forceinline__ std::size_t grid_step() {
  return static_cast<std::size_t>(gridDim.x) * kThreads;
}

// A private histogram per block in shared memory, counted with block-scope atomics, then merged
// into bins[] with one device-scope atomic per non-zero bin.
__global__ void __launch_bounds__(kThreads)
    block_scope_histogram_kernel(const unsigned* __restrict__ in, int n, unsigned* bins) {
  // TODO: __shared__ unsigned mine[kScopeBins]; thread t clears mine[t], then
  //       __syncthreads() (a thread may count into a bin another thread cleared). Grid-stride
  //       over in[] with a block-scope add: atomicAdd_block(&mine[scope_bin(in[i])], 1u).
  //       (cuda::atomic_ref<unsigned, cuda::thread_scope_block> makes the same promise, but
  //       nvcc 13.0 reaches shared memory through a generic address with it: see the SASS.)
  //       __syncthreads() again, then thread t adds mine[t], if it is not 0, to bins[t] at
  //       device scope (atomicAdd): every block adds into the same bins[].
  (void)in; (void)n; (void)bins;
}

// Every value straight to bins[] with a device-scope atomic: all blocks share each bin.
__global__ void __launch_bounds__(kThreads)
    device_scope_histogram_kernel(const unsigned* __restrict__ in, int n, unsigned* bins) {
  // TODO: Grid-stride over in[] with atomicAdd(&bins[scope_bin(in[i])], 1u): the
  //       legacy atomicAdd is relaxed and device-scope, like cuda::atomic_ref<unsigned,
  //       cuda::thread_scope_device>::fetch_add with cuda::memory_order_relaxed.
  (void)in; (void)n; (void)bins;
}

// Counts the values of bin `bin` in registers, then per block in shared memory, and adds the
// block's count to *counter with one system-scope atomic: the host adds to it meanwhile.
__global__ void __launch_bounds__(kThreads)
    system_scope_count_kernel(const unsigned* __restrict__ in, int n, unsigned bin,
                              unsigned long long* counter) {
  // TODO: Each thread counts its grid-stride share of matches
  //       (scope_bin(in[i]) == bin) in a register. A __shared__ unsigned, set to 0 by thread 0
  //       before a __syncthreads(), collects the threads' counts with block-scope atomics;
  //       after a second __syncthreads(), thread 0 adds the block's count, if it is not 0, to
  //       *counter with atomicAdd_system (or cuda::atomic_ref<unsigned long long,
  //       cuda::thread_scope_system>): the host thread is adding to the same word.
  (void)in; (void)n; (void)bin; (void)counter;
}

void histogram_block_scope(const unsigned* in, int n, unsigned* bins, cudaStream_t stream) {
  // TODO: Nothing to do for n = 0 (the bins keep their counts). Otherwise launch
  //       block_scope_histogram_kernel on `stream`, kThreads threads a block, one block per
  //       kThreads values but no more than fit on the GPU at once (blocks_for and
  //       resident_blocks above), so that each block's clearing and merging is paid for many
  //       values. Never clear bins: they add up.
  (void)in; (void)n; (void)bins; (void)stream;
}

void histogram_device_scope(const unsigned* in, int n, unsigned* bins, cudaStream_t stream) {
  // TODO: Nothing to do for n = 0; otherwise launch device_scope_histogram_kernel
  //       on `stream` with kThreads threads a block and enough blocks to fill the GPU.
  (void)in; (void)n; (void)bins; (void)stream;
}

void count_system_scope(const unsigned* in, int n, unsigned bin, unsigned long long* counter,
                        cudaStream_t stream) {
  // TODO: Nothing to do for n = 0 (never write *counter: the host may be adding);
  //       otherwise launch system_scope_count_kernel on `stream`, kThreads threads a block,
  //       no more blocks than fit on the GPU at once: each block adds once at system scope.
  (void)in; (void)n; (void)bin; (void)counter; (void)stream;
}
