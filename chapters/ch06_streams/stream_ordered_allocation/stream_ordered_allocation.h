// Exercise ch06 / stream_ordered_allocation: temporaries allocated and freed in stream order,
// from a memory pool that keeps its memory between synchronisations.
//
// A pipeline works through many chunks of an array on one stream, and each chunk needs a
// scratch buffer as long as the chunk, written by one kernel, read by the next, then no longer
// needed. With cudaMalloc and cudaFree around each chunk, the host stops at every cudaFree
// until the device has caught up, and the device idles while the host prepares the next chunk.
// cudaMallocAsync and cudaFreeAsync are operations on the stream like a kernel launch: the
// host enqueues every chunk without waiting, and the pool hands the memory one chunk freed to
// the next chunk's allocation.
//
// Frozen API: the tests and the benchmark call exactly this.
//
//   open_scratch_pool()
//       the memory pool process_chunks allocates from, for the current device: the device's
//       current pool (cudaDeviceGetMemPool) or a pool of your own (cudaMemPoolCreate, pinned
//       allocations located on the current device). Raise its release threshold
//       (cudaMemPoolAttrReleaseThreshold) to at least kScratchPoolKeeps bytes: with the
//       default threshold, 0, the pool gives all its unused memory back at every
//       synchronisation, and the next call pays the driver to map it again.
//   close_scratch_pool(pool)
//       gives back everything the pool holds, so that the device has as much free memory as
//       before open_scratch_pool: a pool of your own is destroyed (cudaMemPoolDestroy); the
//       device's own pool gets its release threshold back to 0 and is trimmed
//       (cudaMemPoolTrimTo). Accepts nullptr. The caller has waited for the work of every
//       process_chunks call on the pool first.
//   process_chunks(in, out, offsets, chunks, pool, stream)
//       chunk c covers [offsets[c], offsets[c + 1]) of in and out; offsets is a host array of
//       chunks + 1 values, offsets[0] == 0, never decreasing (a chunk may be empty). For each
//       non-empty chunk, of `count` elements from `first`:
//           scratch[i]     = chunk_mix(in[first + i])                          i in [0, count)
//           out[first + i] = chunk_pair(scratch[i], scratch[count - 1 - i])    i in [0, count)
//       Element i of the second pass reads its mirror in the first pass's output, so the first
//       pass must have finished for the whole chunk: two kernels (given in your file) with a
//       scratch of `count` uint32_t between them. For each non-empty chunk, in chunk order,
//       enqueue on `stream` exactly: the scratch's allocation from `pool`
//       (cudaMallocFromPoolAsync, or cudaMallocAsync when `pool` is the device's current
//       pool), mix_kernel, pair_kernel, and the scratch's free (cudaFreeAsync on `stream`).
//       Nothing else: the tests record the call into a graph and read that chain back. Empty
//       chunks enqueue nothing; chunks == 0 does nothing.
//       in and out are device arrays of offsets[chunks] elements that do not overlap; in must
//       not be modified. Return without waiting for the device: no cudaMalloc or cudaFree
//       (cudaFree of cudaMalloc'd memory may wait for the whole device), no synchronisation.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// The release threshold open_scratch_pool must set at least: far more than the scratch of the
// tests' and the benchmark's largest chunk. UINT64_MAX (keep everything) is the usual choice.
inline constexpr std::uint64_t kScratchPoolKeeps = std::uint64_t{64} << 20;

// The first pass, per element: a 32-bit integer hash (multiply and xor-shift rounds), so that
// every input bit reaches every output bit and the host and the device agree exactly.
__host__ __device__ inline std::uint32_t chunk_mix(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// The second pass, per element: its own mixed value plus its mirror's rotated by 7 bits, so
// that a wrong mirror (a chunk boundary off by one) changes the result.
__host__ __device__ inline std::uint32_t chunk_pair(std::uint32_t own, std::uint32_t mirror) {
  return own + ((mirror << 7) | (mirror >> 25));
}

cudaMemPool_t open_scratch_pool();
void close_scratch_pool(cudaMemPool_t pool);
void process_chunks(const std::uint32_t* in, std::uint32_t* out, const std::size_t* offsets,
                    int chunks, cudaMemPool_t pool, cudaStream_t stream);
