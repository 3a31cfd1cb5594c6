#include "aos_to_soa_common.h"

#include "course/random.h"

std::vector<Particle> random_particles(int n, std::mt19937_64& rng) {
  const auto v = course::random_floats(static_cast<std::size_t>(n) * 8, -10.f, 10.f, rng);
  std::vector<Particle> particles(n);
  for (int i = 0; i < n; ++i) {
    const float* f = &v[static_cast<std::size_t>(i) * 8];
    particles[i] = {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]};
  }
  return particles;
}

SoABuffers::SoABuffers(int n) {
  for (auto& f : fields_) f = course::DeviceBuffer<float>(n);
}

ParticlesSoA SoABuffers::view() {
  return {fields_[0].data(), fields_[1].data(), fields_[2].data(), fields_[3].data(),
          fields_[4].data(), fields_[5].data(), fields_[6].data(), fields_[7].data()};
}

std::vector<float> SoABuffers::download(int field) const { return fields_[field].download(); }

void SoABuffers::fill_bytes(unsigned char value) {
  for (auto& f : fields_) f.fill_bytes(value);
}

std::vector<float> field_of(const std::vector<Particle>& particles, int field) {
  std::vector<float> out(particles.size());
  for (std::size_t i = 0; i < particles.size(); ++i)
    out[i] = reinterpret_cast<const float*>(&particles[i])[field];
  return out;
}
