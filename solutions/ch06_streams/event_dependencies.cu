#include "event_dependencies.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"

namespace {

constexpr int kThreads = 256;

int grid_for(std::size_t n) {
  const std::size_t needed = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::min<std::size_t>(needed, course::sm_count() * 8));
}

}  // namespace

__global__ void produce_a_kernel(const float* __restrict__ x, float* __restrict__ a,
                                 std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    a[i] = produce_a(x[i]);
}

__global__ void produce_b_kernel(const float* __restrict__ y, float* __restrict__ b,
                                 std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    b[i] = produce_b(y[i]);
}

__global__ void consume_kernel(const float* __restrict__ a, const float* __restrict__ b,
                               float* __restrict__ c, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    c[i] = consume(a[i], b[i]);
}

void run_dag(const float* x, const float* y, float* a, float* b, float* c, std::size_t n,
             cudaStream_t stream_a, cudaStream_t stream_b, cudaStream_t stream_c) {
  if (n == 0) return;
  const int blocks = grid_for(n);
  // @begin-solution: Launch each producer on its own stream and record an event right after
  // @hint: it (cudaEventCreateWithFlags with cudaEventDisableTiming, cudaEventRecord). Make
  // @hint: stream_c wait for both events (cudaStreamWaitEvent), then launch the consumer on
  // @hint: stream_c. The events can be destroyed at once: a pending event is released once it
  // @hint: completes, and the waits already enqueued still hold.
  produce_a_kernel<<<blocks, kThreads, 0, stream_a>>>(x, a, n);
  CUDA_CHECK_LAUNCH();
  produce_b_kernel<<<blocks, kThreads, 0, stream_b>>>(y, b, n);
  CUDA_CHECK_LAUNCH();
  cudaEvent_t a_done = nullptr, b_done = nullptr;
  CUDA_CHECK(cudaEventCreateWithFlags(&a_done, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&b_done, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventRecord(a_done, stream_a));
  CUDA_CHECK(cudaEventRecord(b_done, stream_b));
  CUDA_CHECK(cudaStreamWaitEvent(stream_c, a_done, 0));
  CUDA_CHECK(cudaStreamWaitEvent(stream_c, b_done, 0));
  CUDA_CHECK(cudaEventDestroy(a_done));
  CUDA_CHECK(cudaEventDestroy(b_done));
  consume_kernel<<<blocks, kThreads, 0, stream_c>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)x; (void)y; (void)a; (void)b; (void)c; (void)blocks;
  // @skeleton: (void)stream_a; (void)stream_b; (void)stream_c;
  // @end-solution
}
