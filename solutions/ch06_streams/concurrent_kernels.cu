#include "concurrent_kernels.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "course/check.h"

struct StreamPool {
  // @begin-solution: The pool's streams, and the events run_tasks forks and joins with
  // @hint: (or create those per call). Release them in a destructor, so that a pool half
  // @hint: made when a CUDA call fails is still released.
  std::vector<cudaStream_t> streams;
  cudaEvent_t fork = nullptr;           // recorded on the caller's stream
  std::vector<cudaEvent_t> joins;       // one per pool stream, after its last task

  ~StreamPool() {
    for (cudaEvent_t join : joins) cudaEventDestroy(join);
    if (fork != nullptr) cudaEventDestroy(fork);
    for (cudaStream_t stream : streams) cudaStreamDestroy(stream);
  }
  // @end-solution
};

__global__ void task_kernel(const float* __restrict__ in, float* __restrict__ out,
                            std::size_t n, int iterations) {
  // @begin-solution: A block-stride loop over the task's n elements:
  // @hint: out[i] = task_chain(in[i], iterations).
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = task_chain(in[i], iterations);
  // @skeleton: (void)in; (void)out; (void)n; (void)iterations;
  // @end-solution
}

StreamPool* create_stream_pool(int count) {
  auto pool = std::make_unique<StreamPool>();
  // @begin-solution: Make `count` streams, each with
  // @hint: cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking): a blocking stream would wait
  // @hint: for every launch on the legacy default stream. Events used only for ordering need
  // @hint: no timestamps (cudaEventCreateWithFlags(&e, cudaEventDisableTiming)).
  for (int k = 0; k < count; ++k) {
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    pool->streams.push_back(stream);
    cudaEvent_t join = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    pool->joins.push_back(join);
  }
  CUDA_CHECK(cudaEventCreateWithFlags(&pool->fork, cudaEventDisableTiming));
  // @skeleton: (void)count;
  // @end-solution
  return pool.release();
}

void destroy_stream_pool(StreamPool* pool) { delete pool; }

cudaStream_t pool_stream(const StreamPool* pool, int i) {
  // @begin-solution: The pool's i-th stream.
  return pool->streams.at(static_cast<std::size_t>(i));
  // @skeleton: (void)pool; (void)i;
  // @skeleton: return nullptr;
  // @end-solution
}

void run_tasks(StreamPool* pool, const float* const* inputs, float* const* outputs,
               std::size_t n_each, int tasks, int iterations, cudaStream_t stream) {
  if (tasks <= 0 || n_each == 0) return;
  // @begin-solution: Fork: record an event on `stream` and make every pool stream you use
  // @hint: wait for it (cudaStreamWaitEvent). Launch task t's kernel on pool stream
  // @hint: t % (streams used), one block of kTaskThreads threads, CUDA_CHECK_LAUNCH() after it.
  // @hint: Join: record an event on each stream used after its last task, and make `stream`
  // @hint: wait for each. Never wait on the host.
  const int used = std::min(tasks, static_cast<int>(pool->streams.size()));
  CUDA_CHECK(cudaEventRecord(pool->fork, stream));
  for (int k = 0; k < used; ++k) CUDA_CHECK(cudaStreamWaitEvent(pool->streams[k], pool->fork, 0));
  // Round-robin, so that consecutive launches land on different streams and the first `used`
  // tasks start together.
  for (int t = 0; t < tasks; ++t) {
    task_kernel<<<1, kTaskThreads, 0, pool->streams[t % used]>>>(inputs[t], outputs[t], n_each,
                                                                 iterations);
    CUDA_CHECK_LAUNCH();
  }
  for (int k = 0; k < used; ++k) {
    CUDA_CHECK(cudaEventRecord(pool->joins[k], pool->streams[k]));
    CUDA_CHECK(cudaStreamWaitEvent(stream, pool->joins[k], 0));
  }
  // @skeleton: (void)pool; (void)inputs; (void)outputs; (void)iterations; (void)stream;
  // @end-solution
}
