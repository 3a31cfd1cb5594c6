#include "warp_divergence.h"

#include <algorithm>

#include "course/check.h"
#include "course/device.h"

__global__ void warp_uniform_kernel(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                    int n) {
  // @begin-solution: Number the threads' slots v = 0, 1, 2, ... (grid-stride). Slot v lies in
  // @hint: warp w = v / 32 at lane v % 32; let warp w take element 64 * (w / 2) + 2 * lane +
  // @hint: (w % 2): even warps take the even elements of a 64-element chunk, odd warps the odd
  // @hint: ones, so the parity test is the same for all 32 lanes. Keep every lane in the loop
  // @hint: until its slot passes the last chunk, and skip elements at or past n.
  const long long slots = (static_cast<long long>(n) + 63) / 64 * 64;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long v = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; v < slots;
       v += stride) {
    const long long warp = v / 32;
    const long long lane = v % 32;
    const long long i = 64 * (warp / 2) + 2 * lane + warp % 2;
    if (i >= n) continue;
    // warp % 2 is the same for every lane of a hardware warp (blockDim.x is a multiple of 32).
    if (warp % 2 == 0)
      out[i] = even_branch(in[i]);
    else
      out[i] = odd_branch(in[i]);
  }
  // @skeleton: (void)in; (void)out; (void)n;
  // @end-solution
}

void warp_uniform_branches(const unsigned* in, unsigned* out, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: Launch warp_uniform_kernel with a block size that is a multiple of 32
  // @hint: (so each hardware warp is one of the kernel's warps) and enough blocks for every
  // @hint: 64-element chunk or to fill the GPU (a few blocks for each of the
  // @hint: course::sm_count() SMs), on `stream`; check the launch.
  const int threads = 256;
  const long long slots = (static_cast<long long>(n) + 63) / 64 * 64;
  const long long fill = static_cast<long long>(course::sm_count()) * 16;
  const int blocks = static_cast<int>(std::min((slots + threads - 1) / threads, fill));
  warp_uniform_kernel<<<blocks, threads, 0, stream>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)in; (void)out; (void)stream;
  // @end-solution
}
