// The array-of-structures drift the SoA version is measured against.
#include <algorithm>
#include <cstddef>

#include "aos_to_soa.h"
#include "course/check.h"

__global__ void drift_aos_baseline_kernel(Particle* __restrict__ p, float dt, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    // Only four fields are needed, but they share 32-byte sectors with the four others.
    p[i].x += p[i].vx * dt;
    p[i].y += p[i].vy * dt;
  }
}

void drift_aos_baseline(Particle* aos, float dt, int n, cudaStream_t stream) {
  if (n <= 0) return;
  const int threads = 256;
  drift_aos_baseline_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(aos, dt, n);
  CUDA_CHECK_LAUNCH();
}

// Benchmark inputs generated on the device: a hash of (seed, index) mapped to [-10, 10).
__global__ void fill_particles_hash_kernel(Particle* p, int n, unsigned long long seed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float* f = reinterpret_cast<float*>(&p[i]);
  for (int k = 0; k < 8; ++k) {
    unsigned long long h = seed ^ (static_cast<unsigned long long>(i) * 8 + k);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    f[k] = static_cast<float>(h >> 40) * (20.0f / 16777216.0f) - 10.0f;
  }
}

void fill_particles_hash(Particle* p, int n, unsigned long long seed, cudaStream_t stream) {
  if (n <= 0) return;
  const int threads = 256;
  fill_particles_hash_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(p, n, seed);
  CUDA_CHECK_LAUNCH();
}
