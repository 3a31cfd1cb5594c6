#include "aos_to_soa.h"

#include <cstddef>

#include "course/check.h"

__global__ void aos_to_soa_kernel(const Particle* __restrict__ aos, ParticlesSoA soa, int n) {
  // TODO: One particle per thread: read aos[i] once and store each field into its
  //       own array.
  (void)aos; (void)soa; (void)n;
}

__global__ void drift_soa_kernel(ParticlesSoA soa, float dt, int n) {
  // TODO: One particle per thread: x[i] += vx[i] * dt, y[i] += vy[i] * dt. Touch
  //       no other field.
  (void)soa; (void)dt; (void)n;
}

void aos_to_soa(const Particle* aos, ParticlesSoA soa, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // TODO: Launch aos_to_soa_kernel with one thread per particle.
  (void)aos; (void)soa; (void)stream;
}

void drift_soa(ParticlesSoA soa, float dt, int n, cudaStream_t stream) {
  if (n <= 0) return;
  // TODO: Launch drift_soa_kernel with one thread per particle.
  (void)soa; (void)dt; (void)stream;
}
