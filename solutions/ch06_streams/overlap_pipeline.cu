#include "overlap_pipeline.h"

#include <algorithm>
#include <cstddef>

#include "course/check.h"
#include "course/device.h"

float* alloc_host(std::size_t n) {
  if (n == 0) return nullptr;
  // @begin-solution: The copy engines read and write page-locked memory directly, so a
  // @hint: cudaMemcpyAsync from or to it returns at once and runs beside kernels. Allocate it
  // @hint: with cudaMallocHost (or cudaHostAlloc) and check the call with CUDA_CHECK.
  float* pointer = nullptr;
  CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pointer), n * sizeof(float)));
  return pointer;
  // @skeleton: return nullptr;
  // @end-solution
}

void free_host(float* p) {
  // @begin-solution: Release it with the call that matches the allocation (cudaFreeHost
  // @hint: for cudaMallocHost); nullptr must be accepted.
  if (p != nullptr) CUDA_CHECK(cudaFreeHost(p));
  // @skeleton: (void)p;
  // @end-solution
}

__global__ void pipeline_kernel(const float* __restrict__ in, float* __restrict__ out,
                                std::size_t count, int iterations) {
  // Given: this exercise is about how the chunks are scheduled, not about the kernel.
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride)
    out[i] = pipeline_transform(in[i], iterations);
}

void run_pipeline(const float* host_in, float* host_out, float* dev_in, float* dev_out,
                  std::size_t n, int iterations, int chunks, const cudaStream_t* workers,
                  int num_workers, cudaStream_t stream) {
  if (n == 0) return;
  // @begin-solution: Fork: record an event on `stream` and make every worker you use wait
  // @hint: for it (cudaStreamWaitEvent). Then for each chunk c, on s = workers[c % num_workers]:
  // @hint: cudaMemcpyAsync the chunk from host_in to dev_in, pipeline_kernel<<<..., s>>> on
  // @hint: it, cudaMemcpyAsync it from dev_out to host_out. Chunk c starts at
  // @hint: c * (n / chunks) + min(c, n % chunks); skip the empty ones. Each stream runs its
  // @hint: chunks in order, and the streams run side by side. Join: record an event on each
  // @hint: worker after its last copy and make `stream` wait for each. Never wait on the
  // @hint: host. Events made with cudaEventDisableTiming are the cheapest, and may be
  // @hint: destroyed right after the waits.
  const int threads = 256;
  const int most_blocks = course::sm_count() * 8;
  const int used_workers = std::min(num_workers, chunks);
  const std::size_t chunk_size = n / static_cast<std::size_t>(chunks);
  const std::size_t remainder = n % static_cast<std::size_t>(chunks);

  cudaEvent_t forked = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventRecord(forked, stream));
  for (int w = 0; w < used_workers; ++w) CUDA_CHECK(cudaStreamWaitEvent(workers[w], forked, 0));
  CUDA_CHECK(cudaEventDestroy(forked));

  for (int c = 0; c < chunks; ++c) {
    const auto index = static_cast<std::size_t>(c);
    // Sizes differ by at most one: the first `remainder` chunks take one element more.
    const std::size_t first = index * chunk_size + std::min(index, remainder);
    const std::size_t count = chunk_size + (index < remainder ? 1 : 0);
    if (count == 0) continue;
    const cudaStream_t worker = workers[c % num_workers];
    const std::size_t bytes = count * sizeof(float);
    CUDA_CHECK(cudaMemcpyAsync(dev_in + first, host_in + first, bytes, cudaMemcpyHostToDevice,
                               worker));
    const std::size_t needed = (count + threads - 1) / threads;
    const int blocks = static_cast<int>(std::min(needed, static_cast<std::size_t>(most_blocks)));
    pipeline_kernel<<<blocks, threads, 0, worker>>>(dev_in + first, dev_out + first, count,
                                                    iterations);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(host_out + first, dev_out + first, bytes,
                               cudaMemcpyDeviceToHost, worker));
  }

  for (int w = 0; w < used_workers; ++w) {
    cudaEvent_t joined = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecord(joined, workers[w]));
    CUDA_CHECK(cudaStreamWaitEvent(stream, joined, 0));
    CUDA_CHECK(cudaEventDestroy(joined));
  }
  // @skeleton: (void)host_in; (void)host_out; (void)dev_in; (void)dev_out; (void)iterations;
  // @skeleton: (void)chunks; (void)workers; (void)num_workers; (void)stream;
  // @end-solution
}
