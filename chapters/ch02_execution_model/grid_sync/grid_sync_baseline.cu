// Course code for grid_sync: the per-sweep baseline the benchmark times, the check of a
// cooperative launch the student may call, and the probe the residency test launches.
#include "grid_sync_baseline.h"

#include <cooperative_groups.h>

#include <sstream>
#include <string>

#include "course/check.h"
#include "course/device.h"
#include "grid_sync.h"

namespace cg = cooperative_groups;

namespace {

constexpr int kSweepThreads = 256;
constexpr int kProbeThreads = 128;

// One sweep, one thread per element: ends copied, inner points averaged with weights 1, 2, 1.
__global__ void __launch_bounds__(kSweepThreads)
    baseline_sweep_kernel(const int* src, int n, int* dst) {
  const long long i = static_cast<long long>(blockIdx.x) * kSweepThreads + threadIdx.x;
  if (i >= n) return;
  int value = src[i];
  if (i > 0 && i < n - 1) value = (src[i - 1] + 2 * value + src[i + 1]) >> 2;
  dst[i] = value;
}

__global__ void __launch_bounds__(kProbeThreads) rotate_probe_kernel(int* ids, int* rotated) {
  const cg::grid_group grid = cg::this_grid();
  if (threadIdx.x == 0) ids[blockIdx.x] = static_cast<int>(blockIdx.x);
  grid.sync();
  if (threadIdx.x == 0) rotated[blockIdx.x] = ids[(blockIdx.x + 1) % gridDim.x];
}

}  // namespace

void course_jacobi_per_sweep(const int* in, int n, int sweeps, int* out, int* scratch,
                             cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(n);
  const unsigned blocks = static_cast<unsigned>((count + kSweepThreads - 1) / kSweepThreads);
  const int* src = in;
  if (sweeps < 1)  // nothing to relax: the result is the input
    CUDA_CHECK(cudaMemcpyAsync(out, src, count * sizeof(int), cudaMemcpyDeviceToDevice, stream));
  for (int left = sweeps; left > 0; --left) {
    // An odd number of sweeps left writes out, so that the last one (left = 1) does.
    int* dst = left % 2 == 1 ? out : scratch;
    baseline_sweep_kernel<<<blocks, kSweepThreads, 0, stream>>>(src, n, dst);
    CUDA_CHECK_LAUNCH();
    src = dst;
  }
}

void check_cooperative_launch(cudaError_t status, const void* kernel, int grid, int block,
                              std::size_t dynamic_smem, const char* file, int line) {
  if (status == cudaSuccess) {
    course::check_launch(file, line);  // what CUDA_CHECK_LAUNCH does after <<<...>>>
    return;
  }
  // The refused launch is also the runtime's last error: clear it, or the next
  // CUDA_CHECK_LAUNCH anywhere would report it again at an innocent launch.
  (void)cudaGetLastError();
  if (status != cudaErrorCooperativeLaunchTooLarge)
    course::throw_cuda_error(status, "cudaLaunchCooperativeKernel", file, line);
  int per_sm = 0;
  const cudaError_t asked =
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, dynamic_smem);
  const int sms = course::sm_count();
  std::ostringstream what;
  what << "cudaLaunchCooperativeKernel: too many blocks for a cooperative launch (" << grid;
  if (asked == cudaSuccess) {
    what << " > max resident " << per_sm * sms << " = " << per_sm << " blocks of " << block
         << " threads";
    if (dynamic_smem > 0) what << " and " << dynamic_smem << " bytes of dynamic shared memory";
    what << " per SM x " << sms << " SMs)";
  } else {
    (void)cudaGetLastError();
    what << " blocks of " << block << " threads; the occupancy API could not say how many fit: "
         << cudaGetErrorName(asked) << ")";
  }
  course::throw_cuda_error(status, what.str().c_str(), file, line);
}

int rotate_probe_max_blocks() {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rotate_probe_kernel,
                                                           kProbeThreads, 0));
  return per_sm * course::sm_count();
}

void rotate_probe(int blocks, int* ids, int* rotated, cudaStream_t stream) {
  void* args[] = {&ids, &rotated};
  CHECK_COOPERATIVE_LAUNCH(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(
                                                           rotate_probe_kernel),
                                                       blocks, kProbeThreads, args, 0, stream),
                           rotate_probe_kernel, blocks, kProbeThreads, 0);
}
