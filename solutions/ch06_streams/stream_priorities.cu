#include "stream_priorities.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"

__global__ void urgent_kernel(const float* __restrict__ in, float* __restrict__ out,
                              std::size_t n) {
  // @begin-solution: A grid-stride loop: out[i] = urgent_response(in[i]).
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = urgent_response(in[i]);
  // @skeleton: (void)in; (void)out; (void)n;
  // @end-solution
}

void create_priority_streams(cudaStream_t* urgent, cudaStream_t* background) {
  // @begin-solution: Read the range with cudaDeviceGetStreamPriorityRange(&least,
  // @hint: &greatest), then make each stream with
  // @hint: cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority):
  // @hint: `urgent` at greatest (the smaller number), `background` at least.
  int least = 0, greatest = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CUDA_CHECK(cudaStreamCreateWithPriority(urgent, cudaStreamNonBlocking, greatest));
  CUDA_CHECK(cudaStreamCreateWithPriority(background, cudaStreamNonBlocking, least));
  // @skeleton: *urgent = nullptr;
  // @skeleton: *background = nullptr;
  // @end-solution
}

void destroy_priority_streams(cudaStream_t urgent, cudaStream_t background) {
  // @begin-solution: Destroy both streams.
  if (urgent != nullptr) CUDA_CHECK(cudaStreamDestroy(urgent));
  if (background != nullptr) CUDA_CHECK(cudaStreamDestroy(background));
  // @skeleton: (void)urgent; (void)background;
  // @end-solution
}

void submit_urgent(const float* in, float* out, std::size_t n, cudaStream_t urgent) {
  if (n == 0) return;
  // @begin-solution: Launch urgent_kernel on `urgent` with blocks of 256 threads, enough of
  // @hint: them for n (a few SMs' worth at most: the grid-stride loop does the rest), then
  // @hint: CUDA_CHECK_LAUNCH(). Do not wait for it.
  const int threads = 256;
  const std::size_t needed = (n + threads - 1) / threads;
  const int blocks = static_cast<int>(
      std::min<std::size_t>(needed, static_cast<std::size_t>(course::sm_count()) * 4));
  urgent_kernel<<<blocks, threads, 0, urgent>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)urgent;
  // @end-solution
}
