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
  // TODO: Return u[i] for i == 0 and i == n - 1; otherwise
  //       (u[i - 1] + 2 * u[i] + u[i + 1]) >> 2 in int arithmetic (exact, unlike floats).
  (void)u; (void)i; (void)n;
  return 0;
}

// One sweep, src to dst, one thread per element.
__global__ void __launch_bounds__(kThreads) sweep_kernel(const int* src, int n, int* dst) {
  // TODO: i = blockIdx.x * blockDim.x + threadIdx.x (as a long long); if i < n,
  //       dst[i] = relax(src, i, n).
  (void)src; (void)n; (void)dst;
}

// Every sweep in one grid that stays resident throughout: grid-stride loops over the elements,
// and a grid-wide barrier between one sweep's writes and the next sweep's reads. The buffers are
// plain pointers, not const __restrict__: a sweep reads what other blocks wrote in this same
// kernel, which the read-only path (what const __restrict__ may compile to) need not see.
__global__ void __launch_bounds__(kThreads)
    all_sweeps_kernel(const int* in, int n, int sweeps, int* out, int* scratch) {
  // TODO: g = cg::this_grid(); each thread starts at g.thread_rank() and strides by
  //       g.num_threads() (both unsigned long long). sweeps == 0: copy in to out. Otherwise
  //       sweep s reads src (in for the first) and writes dst = out when sweeps - s is odd,
  //       else scratch, so that the last sweep lands in out; between two sweeps every thread
  //       calls g.sync() (all of them, none may skip it), then src = dst. The barrier
  //       orders both hazards: the next sweep reads what this one wrote, and it overwrites
  //       the buffer this one read.
  (void)in; (void)n; (void)sweeps; (void)out; (void)scratch;
}

void jacobi_per_sweep(const int* in, int n, int sweeps, int* out, int* scratch,
                      cudaStream_t stream) {
  // TODO: sweeps == 0: cudaMemcpyAsync in to out (device to device) on the stream.
  //       Otherwise launch sweep_kernel `sweeps` times on the stream, ceil(n / kThreads)
  //       blocks of kThreads, the first reading in, each writing out or scratch so that the
  //       last one writes out (count the sweeps left: an odd number left writes out), each
  //       reading what the one before wrote. Check every launch.
  (void)in; (void)n; (void)sweeps; (void)out; (void)scratch; (void)stream;
}

void jacobi_grid_sync(const int* in, int n, int sweeps, int* out, int* scratch,
                      cudaStream_t stream) {
  // TODO: Check cudaDeviceGetAttribute(&yes, cudaDevAttrCooperativeLaunch, device)
  //       first. Ask cudaOccupancyMaxActiveBlocksPerMultiprocessor how many blocks of kThreads
  //       threads of all_sweeps_kernel fit on one SM; times course::sm_count() that is the
  //       most blocks a cooperative launch may have. Use that many, but no more than
  //       ceil(n / kThreads). Put the addresses of the kernel's arguments in a void* array
  //       and launch with cudaLaunchCooperativeKernel(kernel, grid, kThreads, args, 0,
  //       stream), checked with CHECK_COOPERATIVE_LAUNCH (grid_sync.h).
  (void)in; (void)n; (void)sweeps; (void)out; (void)scratch; (void)stream;
}
