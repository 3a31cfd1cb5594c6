#include "warp_vote_baseline.h"

#include "course/check.h"

namespace {

constexpr int kBlock = 256;             // threads of a counting or scattering block
constexpr int kSteps = 8;               // rows of kBlock elements per block
constexpr int kSpan = kBlock * kSteps;  // elements per block
constexpr int kScanBlock = 1024;        // threads of the one block that scans the counts

// Inclusive prefix sum of one value per thread over a block of kSize threads, through shared
// memory: log2(kSize) steps, each reading one buffer and writing the other, with a barrier
// between steps. Every thread of the block must call it. Returns this thread's prefix and
// sets `sum` to the block's total.
template <int kSize>
__device__ int shared_inclusive_scan(int value, int (&buf)[2][kSize], int& sum) {
  int from = 0;
  buf[from][threadIdx.x] = value;
  __syncthreads();
  for (int d = 1; d < kSize; d *= 2) {
    int s = buf[from][threadIdx.x];
    if (threadIdx.x >= static_cast<unsigned>(d)) s += buf[from][threadIdx.x - d];
    buf[1 - from][threadIdx.x] = s;
    from = 1 - from;
    __syncthreads();
  }
  const int result = buf[from][threadIdx.x];
  sum = buf[from][kSize - 1];
  __syncthreads();  // every thread has read before the next call writes buf[0]
  return result;
}

// Pass 1: one shared-memory atomicAdd per kept element. (nvcc 13.0 compiles the increment to
// one ATOMS.POPC.INC per warp instruction for sm_90, which adds the number of active lanes in
// one operation: the costly part of this baseline is the ranking below.)
__global__ void atomic_count_kernel(const int* __restrict__ in, int n, int threshold,
                                    int* __restrict__ block_counts) {
  __shared__ int kept;
  if (threadIdx.x == 0) kept = 0;
  __syncthreads();
  // All loads first, so that eight are in flight as in compact_if_greater; an element past n
  // reads as `threshold`, which is never kept.
  const long long start = static_cast<long long>(blockIdx.x) * kSpan + threadIdx.x;
  int values[kSteps];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const long long i = start + static_cast<long long>(s) * kBlock;
    values[s] = i < n ? in[i] : threshold;
  }
#pragma unroll
  for (int s = 0; s < kSteps; ++s)
    if (values[s] > threshold) atomicAdd(&kept, 1);
  __syncthreads();
  if (threadIdx.x == 0) block_counts[blockIdx.x] = kept;
}

// counts[0, blocks) becomes its exclusive prefix sum; *total the sum of all counts.
__global__ void prefix_counts_kernel(int* __restrict__ counts, int blocks,
                                     int* __restrict__ total) {
  __shared__ int buf[2][kScanBlock];
  int carry = 0;
  for (int base = 0; base < blocks; base += kScanBlock) {
    const int b = base + static_cast<int>(threadIdx.x);
    const int c = b < blocks ? counts[b] : 0;
    int chunk = 0;
    const int inclusive = shared_inclusive_scan<kScanBlock>(c, buf, chunk);
    if (b < blocks) counts[b] = carry + inclusive - c;
    carry += chunk;
  }
  if (threadIdx.x == 0) *total = carry;
}

// Pass 2: each row of kBlock elements is ranked by a shared-memory prefix sum of its keep
// flags; a kept element goes to its block's offset + the row's offset + (rank - 1).
__global__ void prefix_scatter_kernel(const int* __restrict__ in, int n, int threshold,
                                      const int* __restrict__ offsets, int* __restrict__ out) {
  __shared__ int buf[2][kBlock];
  int next = offsets[blockIdx.x];
  const long long start = static_cast<long long>(blockIdx.x) * kSpan + threadIdx.x;
  for (int s = 0; s < kSteps; ++s) {
    const long long i = start + static_cast<long long>(s) * kBlock;
    const int value = i < n ? in[i] : 0;
    const int keep = i < n && value > threshold;
    int row = 0;
    const int rank = shared_inclusive_scan<kBlock>(keep, buf, row);
    if (keep) out[next + rank - 1] = value;
    next += row;
  }
}

}  // namespace

void shared_atomic_compact(const int* in, int n, int threshold, int* out, int* count,
                           int* scratch, cudaStream_t stream) {
  // With n = 0 there are no blocks and only the scan runs: it writes *count = 0.
  const long long span_count = n > 0 ? (static_cast<long long>(n) + kSpan - 1) / kSpan : 0;
  const int blocks = static_cast<int>(span_count);
  if (blocks > 0) {
    atomic_count_kernel<<<blocks, kBlock, 0, stream>>>(in, n, threshold, scratch);
    CUDA_CHECK_LAUNCH();
  }
  prefix_counts_kernel<<<1, kScanBlock, 0, stream>>>(scratch, blocks, count);
  CUDA_CHECK_LAUNCH();
  if (blocks == 0) return;
  prefix_scatter_kernel<<<blocks, kBlock, 0, stream>>>(in, n, threshold, scratch, out);
  CUDA_CHECK_LAUNCH();
}
