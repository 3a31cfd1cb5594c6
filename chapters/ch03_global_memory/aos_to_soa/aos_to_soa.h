// Exercise ch03 / aos_to_soa: the same particle update on an array of structures (the course's
// baseline) and on a structure of arrays (yours).
//
// Frozen API.
//
//   Particle             one particle, 32 bytes: position, velocity, mass, charge.
//   ParticlesSoA         the same data as eight separate device arrays of n floats.
//   aos_to_soa(aos, soa, n, stream)
//                        copies field by field: soa.x[i] = aos[i].x, ... for every field.
//   drift_soa(soa, dt, n, stream)
//                        the update, on the SoA layout: x += vx * dt and y += vy * dt for every
//                        particle; nothing else changes. It reads 4 of the 8 fields and writes
//                        2, so the SoA layout moves 24 bytes per particle where the AoS one
//                        moves whole 32-byte structures in and out.
//
// All pointers are device pointers; n >= 0; enqueued on `stream`, returning without waiting.
#pragma once

#include <cuda_runtime.h>

struct Particle {
  float x, y, z;
  float vx, vy, vz;
  float mass, charge;
};
static_assert(sizeof(Particle) == 32, "one particle is one 32-byte sector");

struct ParticlesSoA {
  float* x;
  float* y;
  float* z;
  float* vx;
  float* vy;
  float* vz;
  float* mass;
  float* charge;
};

void aos_to_soa(const Particle* aos, ParticlesSoA soa, int n, cudaStream_t stream);
void drift_soa(ParticlesSoA soa, float dt, int n, cudaStream_t stream);
