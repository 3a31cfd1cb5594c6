// A neighbour for scripts/check_shared_gpu.py: keeps every SM of its GPU busy with short
// kernels, one after another, until it is killed or SECONDS pass. Build: nvcc -o gpu_hog
// scripts/gpu_hog.cu; run: gpu_hog [SECONDS].
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

__global__ void spin(long long cycles, unsigned* sink) {
  const long long start = clock64();
  unsigned x = threadIdx.x;
  while (clock64() - start < cycles) x = x * 1664525u + 1013904223u;
  if (x == 42u) *sink = x;  // never in practice; keeps the loop from being removed
}

bool ok(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "gpu_hog: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 600.0;
  int sms = 0, khz = 0;
  unsigned* sink = nullptr;
  if (!ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "SM count") ||
      !ok(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0), "clock rate") ||
      !ok(cudaMalloc(&sink, sizeof(unsigned)), "cudaMalloc"))
    return 1;
  std::printf("gpu_hog: keeping %d SMs busy for up to %.0f s\n", sms, seconds);
  std::fflush(stdout);
  const long long cycles = static_cast<long long>(khz) * 20;  // about 20 ms a kernel
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    spin<<<sms * 8, 256>>>(cycles, sink);
    if (!ok(cudaDeviceSynchronize(), "spin")) return 1;
  }
  return 0;
}
