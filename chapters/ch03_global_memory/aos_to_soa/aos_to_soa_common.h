// Course helpers for the aos_to_soa tests and benchmark.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "aos_to_soa.h"
#include "course/buffers.h"

std::vector<Particle> random_particles(int n, std::mt19937_64& rng);

// Device-side fill for the benchmark's large inputs (aos_to_soa_baseline.cu): every field a
// course::hashed_float in [-10, 10).
void fill_particles_hash(Particle* p, int n, std::uint64_t seed, cudaStream_t stream);

// Eight device arrays owned together, viewed as a ParticlesSoA.
class SoABuffers {
 public:
  explicit SoABuffers(int n);
  ParticlesSoA view();
  std::vector<float> download(int field) const;  // field 0..7 in Particle's order
  void fill_bytes(unsigned char value);

 private:
  course::DeviceBuffer<float> fields_[8];
};

// Particle field `field` (0..7) of every particle, as one array.
std::vector<float> field_of(const std::vector<Particle>& particles, int field);
