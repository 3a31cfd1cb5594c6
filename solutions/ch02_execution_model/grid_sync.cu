#include "grid_sync.h"

#include <cooperative_groups.h>

#include <algorithm>

#include "course/check.h"
#include "course/device.h"

namespace cg = cooperative_groups;

constexpr int kThreads = 256;

// Element i of one sweep over u (n elements): the ends keep their value, an inner point becomes
// (left + 2 * centre + right) / 4, rounded down. Values below 2^29 keep the sum inside an int.
__device__ __forceinline__ int relax(const int* u, long long i, long long n) {
  // @begin-solution: Return u[i] for i == 0 and i == n - 1; otherwise
  // @hint: (u[i - 1] + 2 * u[i] + u[i + 1]) >> 2 in int arithmetic (exact, unlike floats).
  const int centre = u[i];
  const bool end = i == 0 || i == n - 1;
  return end ? centre : (u[i - 1] + (centre << 1) + u[i + 1]) >> 2;
  // @skeleton: (void)u; (void)i; (void)n;
  // @skeleton: return 0;
  // @end-solution
}

// One sweep, src to dst, one thread per element.
__global__ void __launch_bounds__(kThreads) sweep_kernel(const int* src, int n, int* dst) {
  // @begin-solution: i = blockIdx.x * blockDim.x + threadIdx.x (as a long long); if i < n,
  // @hint: dst[i] = relax(src, i, n).
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = relax(src, i, n);
  // @skeleton: (void)src; (void)n; (void)dst;
  // @end-solution
}

// Every sweep in one grid that stays resident throughout: grid-stride loops over the elements,
// and a grid-wide barrier between one sweep's writes and the next sweep's reads. The buffers are
// plain pointers, not const __restrict__: a sweep reads what other blocks wrote in this same
// kernel, which the read-only path (what const __restrict__ may compile to) need not see.
__global__ void __launch_bounds__(kThreads)
    all_sweeps_kernel(const int* in, int n, int sweeps, int* out, int* scratch) {
  // @begin-solution: g = cg::this_grid(); each thread starts at g.thread_rank() and strides by
  // @hint: g.num_threads() (both unsigned long long). sweeps == 0: copy in to out. Otherwise
  // @hint: sweep s reads src (in for the first) and writes dst = out when sweeps - s is odd,
  // @hint: else scratch, so that the last sweep lands in out; between two sweeps every thread
  // @hint: calls g.sync() (all of them, none may skip it), then src = dst. The barrier
  // @hint: orders both hazards: the next sweep reads what this one wrote, and it overwrites
  // @hint: the buffer this one read.
  const cg::grid_group grid = cg::this_grid();
  const long long first = static_cast<long long>(grid.thread_rank());
  const long long stride = static_cast<long long>(grid.num_threads());
  if (sweeps == 0) {
    for (long long i = first; i < n; i += stride) out[i] = in[i];
    return;
  }
  const int* src = in;
  for (int s = 0; s < sweeps; ++s) {
    int* dst = (sweeps - s) % 2 == 1 ? out : scratch;
    for (long long i = first; i < n; i += stride) dst[i] = relax(src, i, n);
    if (s + 1 < sweeps) grid.sync();
    src = dst;
  }
  // @skeleton: (void)in; (void)n; (void)sweeps; (void)out; (void)scratch;
  // @end-solution
}

void jacobi_per_sweep(const int* in, int n, int sweeps, int* out, int* scratch,
                      cudaStream_t stream) {
  // @begin-solution: sweeps == 0: cudaMemcpyAsync in to out (device to device) on the stream.
  // @hint: Otherwise launch sweep_kernel `sweeps` times on the stream, ceil(n / kThreads)
  // @hint: blocks of kThreads, the first reading in, each writing out or scratch so that the
  // @hint: last one writes out (count the sweeps left: an odd number left writes out), each
  // @hint: reading what the one before wrote. Check every launch.
  if (sweeps == 0) {
    CUDA_CHECK(cudaMemcpyAsync(out, in, sizeof(int) * static_cast<std::size_t>(n),
                               cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const long long blocks = (static_cast<long long>(n) + kThreads - 1) / kThreads;
  const int* src = in;
  for (int s = 0; s < sweeps; ++s) {
    int* dst = (sweeps - s) % 2 == 1 ? out : scratch;
    sweep_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(src, n, dst);
    CUDA_CHECK_LAUNCH();
    src = dst;
  }
  // @skeleton: (void)in; (void)n; (void)sweeps; (void)out; (void)scratch; (void)stream;
  // @end-solution
}

void jacobi_grid_sync(const int* in, int n, int sweeps, int* out, int* scratch,
                      cudaStream_t stream) {
  // @begin-solution: Check cudaDeviceGetAttribute(&yes, cudaDevAttrCooperativeLaunch, device)
  // @hint: first. Ask cudaOccupancyMaxActiveBlocksPerMultiprocessor how many blocks of kThreads
  // @hint: threads of all_sweeps_kernel fit on one SM; times course::sm_count() that is the
  // @hint: most blocks a cooperative launch may have. Use that many, but no more than
  // @hint: ceil(n / kThreads). Put the addresses of the kernel's arguments in a void* array
  // @hint: and launch with cudaLaunchCooperativeKernel(kernel, grid, kThreads, args, 0,
  // @hint: stream), checked with CHECK_COOPERATIVE_LAUNCH (grid_sync.h).
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  int cooperative = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative)
    course::throw_cuda_error(cudaErrorNotSupported, "cudaDevAttrCooperativeLaunch is 0",
                             __FILE__, __LINE__);
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, all_sweeps_kernel,
                                                           kThreads, 0));
  const long long resident = static_cast<long long>(per_sm) * course::sm_count();
  const long long needed = (static_cast<long long>(n) + kThreads - 1) / kThreads;
  const int grid = static_cast<int>(std::max(1LL, std::min(resident, needed)));
  void* args[] = {&in, &n, &sweeps, &out, &scratch};
  CHECK_COOPERATIVE_LAUNCH(
      cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(all_sweeps_kernel), grid,
                                  kThreads, args, 0, stream),
      all_sweeps_kernel, grid, kThreads, 0);
  // @skeleton: (void)in; (void)n; (void)sweeps; (void)out; (void)scratch; (void)stream;
  // @end-solution
}
