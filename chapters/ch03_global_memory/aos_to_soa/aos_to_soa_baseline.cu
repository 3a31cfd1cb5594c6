// The array-of-structures drift the SoA version is measured against.
#include <cstddef>
#include <cstdint>

#include "aos_to_soa_baseline.h"
#include "aos_to_soa_common.h"
#include "course/check.h"
#include "course/device_fill.cuh"
#include "course/device_random.h"

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

namespace {

// Field k of particle i is hashed_float(8 i + k): every field of every particle is drawn
// independently, as if the particles were one array of floats.
struct HashedParticle {
  std::uint64_t seed;
  __device__ Particle operator()(std::size_t i) const {
    float f[8];
    for (int k = 0; k < 8; ++k) f[k] = course::hashed_float(8 * i + k, seed, -10.0f, 10.0f);
    return {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]};
  }
};

}  // namespace

void fill_particles_hash(Particle* p, int n, std::uint64_t seed, cudaStream_t stream) {
  if (n > 0) course::fill_by_index(p, static_cast<std::size_t>(n), stream, HashedParticle{seed});
}
