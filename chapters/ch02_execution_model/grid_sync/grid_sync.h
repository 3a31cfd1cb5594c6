// Exercise ch02 / grid_sync: grid-wide synchronisation. The same iterative computation, S
// Jacobi sweeps over a 1D rod of fixed-point temperatures, done two ways:
//
//   jacobi_per_sweep   one ordinary kernel launch per sweep: the end of each kernel is the
//                      barrier between one sweep and the next (the classic grid barrier);
//   jacobi_grid_sync   ONE cooperative launch (cudaLaunchCooperativeKernel) whose kernel runs
//                      all S sweeps, with cooperative_groups::this_grid().sync() between them.
//
// __syncthreads() waits for the threads of one block only. grid.sync() waits for every block
// of the grid, which works only if every block is resident on an SM at the same time: a block
// still waiting for a free SM could never arrive. A cooperative launch guarantees that, and
// refuses (cudaErrorCooperativeLaunchTooLarge) a grid with more blocks than fit at once. So the
// cooperative grid is sized by the occupancy API, at most
//   cudaOccupancyMaxActiveBlocksPerMultiprocessor(kernel, block, smem) x the SM count
// blocks, and the kernel covers n with grid-stride loops.
//
// One sweep, on u (n ints) into u':
//   u'[0] = u[0] and u'[n - 1] = u[n - 1]   (the two ends are held at fixed temperatures)
//   u'[i] = (u[i - 1] + 2 * u[i] + u[i + 1]) / 4, rounded down, for 0 < i < n - 1.
// Every value is in [0, kJacobiValueLimit), so the sum of four never overflows an int and
// `>> 2` is the same as `/ 4`. Integer arithmetic is exact: a CPU doing the same sweeps gets
// the same bits, and so must both launchers.
//
// Frozen API: the tests and the benchmark call exactly this.
//
//   jacobi_per_sweep(in, n, sweeps, out, scratch, stream)
//   jacobi_grid_sync(in, n, sweeps, out, scratch, stream)
//     in       device pointer to n ints, each in [0, kJacobiValueLimit); never written.
//     n        1 <= n < 2^31.
//     sweeps   0 <= sweeps. 0 copies in to out.
//     out      device pointer to n ints: on return (in stream order) the result of `sweeps`
//              sweeps applied to in. Nothing outside out[0, n) may be written.
//     scratch  device pointer to n ints, yours for the call (the other half of a ping-pong
//              pair with out). Its contents on entry are garbage (a second call finds the
//              first one's). Nothing outside scratch[0, n) may be written.
//     stream   all work goes on this stream; the function returns without waiting.
//
//   jacobi_grid_sync makes one cudaLaunchCooperativeKernel call on `stream` (for any sweeps,
//   0 included) and checks first that the device has cudaDevAttrCooperativeLaunch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

inline constexpr int kJacobiValueLimit = 1 << 29;

void jacobi_per_sweep(const int* in, int n, int sweeps, int* out, int* scratch,
                      cudaStream_t stream);
void jacobi_grid_sync(const int* in, int n, int sweeps, int* out, int* scratch,
                      cudaStream_t stream);

// Course-owned, yours to call (grid_sync_baseline.cu): CUDA_CHECK for what
// cudaLaunchCooperativeKernel returned when it launched `kernel` with `grid` blocks of `block`
// threads and `dynamic_smem` bytes of dynamic shared memory. Throws course::CudaError unless
// `status` is cudaSuccess; for cudaErrorCooperativeLaunchTooLarge its message gives both
// numbers, "too many blocks for a cooperative launch (N > max resident M ...)". Use it as
//   CHECK_COOPERATIVE_LAUNCH(cudaLaunchCooperativeKernel(kernel, grid, block, args, 0, stream),
//                            kernel, grid, block, 0);
void check_cooperative_launch(cudaError_t status, const void* kernel, int grid, int block,
                              std::size_t dynamic_smem, const char* file, int line);

#define CHECK_COOPERATIVE_LAUNCH(status, kernel, grid, block, dynamic_smem)                  \
  check_cooperative_launch((status), reinterpret_cast<const void*>(kernel), (grid), (block), \
                           (dynamic_smem), __FILE__, __LINE__)
