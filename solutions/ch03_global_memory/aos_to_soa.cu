#include "aos_to_soa.h"

#include <cstddef>

#include "course/check.h"

__global__ void aos_to_soa_kernel(const Particle* __restrict__ aos, ParticlesSoA soa, int n) {
  // @begin-solution: One particle per thread: read aos[i] once and store each field into its
  // @hint: own array.
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const Particle p = aos[i];
    soa.x[i] = p.x;
    soa.y[i] = p.y;
    soa.z[i] = p.z;
    soa.vx[i] = p.vx;
    soa.vy[i] = p.vy;
    soa.vz[i] = p.vz;
    soa.mass[i] = p.mass;
    soa.charge[i] = p.charge;
  }
  // @skeleton: (void)aos; (void)soa; (void)n;
  // @end-solution
}

__global__ void drift_soa_kernel(ParticlesSoA soa, float dt, int n) {
  // @begin-solution: One particle per thread: x[i] += vx[i] * dt, y[i] += vy[i] * dt. Touch
  // @hint: no other field.
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    soa.x[i] += soa.vx[i] * dt;
    soa.y[i] += soa.vy[i] * dt;
  }
  // @skeleton: (void)soa; (void)dt; (void)n;
  // @end-solution
}

void aos_to_soa(const Particle* aos, ParticlesSoA soa, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: Launch aos_to_soa_kernel with one thread per particle.
  const int threads = 256;
  aos_to_soa_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(aos, soa, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)aos; (void)soa; (void)stream;
  // @end-solution
}

void drift_soa(ParticlesSoA soa, float dt, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // @begin-solution: Launch drift_soa_kernel with one thread per particle.
  const int threads = 256;
  drift_soa_kernel<<<(n + threads - 1) / threads, threads, 0, stream>>>(soa, dt, n);
  CUDA_CHECK_LAUNCH();
  // @skeleton: (void)soa; (void)dt; (void)stream;
  // @end-solution
}
