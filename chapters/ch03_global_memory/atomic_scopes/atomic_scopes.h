// Exercise ch03 / atomic_scopes: one count kept with atomics of three scopes. The scope of an
// atomic says which threads it is atomic for: the threads of one block, of the device, or of
// the whole system (host threads and other devices included). A narrower scope is cheaper
// only where the data can live closer to the threads, so the exercise counts the same bins at
// block scope in shared memory, at device scope in global memory, and at system scope in
// memory that a host thread updates while the kernel runs.
//
// Frozen API. A value's bin is its low eight bits (scope_bin below), whatever the other bits
// hold. Every function ADDS to what its output holds: it never clears it (n = 0 leaves it as
// it was), so that several calls, or the host and the device together, build one count. The
// caller zeroes the output when it wants a fresh count. Each enqueues its work on `stream`
// and returns without waiting; `in` is a device pointer to n values (0 <= n < 2^31) at any
// 4-byte-aligned address and is never written.
//
//   histogram_block_scope(in, n, bins, stream)
//     bins[b] += the number of values in bin b, for the kScopeBins device-memory bins. Each
//     block counts its share into a private histogram in shared memory with BLOCK-scope
//     atomics (atomicAdd_block, or cuda::atomic_ref<unsigned, cuda::thread_scope_block>),
//     then adds each non-zero private bin to bins[] with one DEVICE-scope atomic.
//   histogram_device_scope(in, n, bins, stream)
//     The same result, every value added straight to bins[] with a DEVICE-scope atomic
//     (atomicAdd, or cuda::atomic_ref<unsigned, cuda::thread_scope_device>): no shared memory.
//   count_system_scope(in, n, bin, counter, stream)
//     *counter += the number of values in bin `bin` (0 <= bin < kScopeBins), with
//     SYSTEM-scope atomics (atomicAdd_system, or cuda::atomic_ref<unsigned long long,
//     cuda::thread_scope_system>). While the kernel runs, a host thread of the course
//     (atomic_scopes_host.h, in the tests and the benchmark) adds to the same *counter with
//     its own system-scope atomics, and the final value must be the exact sum of both sides.
//     A device-scope atomic there is a data race with the host, even when a test happens to
//     pass. Counting in registers and in shared memory first, and adding once per block at
//     system scope, is allowed and cheaper; an atomic per value works too.
//
// Where *counter lives: in managed memory (cudaMallocManaged) where the device reports
// cudaDevAttrConcurrentManagedAccess (Linux with a Pascal or newer GPU, the H100 and H200
// used for grading included); otherwise in mapped pinned memory (cudaHostAllocMapped), which
// the host may update during a kernel only where the device reports
// cudaDevAttrHostNativeAtomicSupported (NVLink-C2C, as on Grace Hopper). Where neither holds,
// the tests' host thread adds before the launch and after it, never during it, and says so.
// The launcher sees only a pointer the device can address, so it need not care which.
//
// The course's code starts the host thread: the grader rejects a student file that starts
// threads (std::thread, pthread_create).
#pragma once

#include <cuda_runtime.h>

inline constexpr int kScopeBins = 256;

// The bin of a value: its low eight bits.
__host__ __device__ constexpr unsigned scope_bin(unsigned value) {
  return value & static_cast<unsigned>(kScopeBins - 1);
}

void histogram_block_scope(const unsigned* in, int n, unsigned* bins, cudaStream_t stream);
void histogram_device_scope(const unsigned* in, int n, unsigned* bins, cudaStream_t stream);
void count_system_scope(const unsigned* in, int n, unsigned bin, unsigned long long* counter,
                        cudaStream_t stream);
