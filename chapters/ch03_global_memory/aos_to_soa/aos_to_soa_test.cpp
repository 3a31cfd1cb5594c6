#include "aos_to_soa.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "aos_to_soa_common.h"
#include "course/testing.h"

namespace {

const char* const kFieldNames[8] = {"x", "y", "z", "vx", "vy", "vz", "mass", "charge"};

void check_conversion(int n) {
  auto rng = course::testing::case_rng();
  const auto particles = random_particles(n, rng);
  course::DeviceBuffer<Particle> aos(particles);
  SoABuffers soa(n);
  soa.fill_bytes(course::kPoisonByte);
  aos_to_soa(aos.data(), soa.view(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int f = 0; f < 8; ++f)
    EXPECT_TRUE(course::testing::equal(field_of(particles, f), soa.download(f),
                                       {{}, std::string("soa.") + kFieldNames[f]}));
}

void check_drift(int n) {
  auto rng = course::testing::case_rng();
  const auto particles = random_particles(n, rng);
  const float dt = course::random_floats(1, 0.001f, 0.1f, rng)[0];
  SoABuffers soa(n);
  ParticlesSoA view = soa.view();
  float* fields[8] = {view.x, view.y, view.z, view.vx, view.vy, view.vz, view.mass, view.charge};
  for (int f = 0; f < 8; ++f)
    CUDA_CHECK(cudaMemcpy(fields[f], field_of(particles, f).data(), n * sizeof(float),
                          cudaMemcpyHostToDevice));
  drift_soa(view, dt, n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  auto x = field_of(particles, 0);
  auto y = field_of(particles, 1);
  for (int i = 0; i < n; ++i) {
    x[i] += particles[i].vx * dt;
    y[i] += particles[i].vy * dt;
  }
  // nvcc may fuse the multiply-add; the tolerance allows the one rounding it saves.
  const course::Tolerance tolerance{1e-5, 1e-5};
  EXPECT_TRUE(course::testing::close(x, soa.download(0), tolerance, {{}, "x after drift"}));
  EXPECT_TRUE(course::testing::close(y, soa.download(1), tolerance, {{}, "y after drift"}));
  for (int f = 2; f < 8; ++f)
    EXPECT_TRUE(course::testing::equal(field_of(particles, f), soa.download(f),
                                       {{}, std::string(kFieldNames[f]) + " (must not change)"}));
}

class AosToSoa : public ::testing::TestWithParam<std::size_t> {};
TEST_P(AosToSoa, ConvertsEveryField) { check_conversion(static_cast<int>(GetParam())); }
TEST_P(AosToSoa, DriftMatchesReference) { check_drift(static_cast<int>(GetParam())); }

std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n_" + std::to_string(info.param);
}
INSTANTIATE_TEST_SUITE_P(Small, AosToSoa, ::testing::ValuesIn(course::testing::small_sizes({4099})),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, AosToSoa,
                         ::testing::ValuesIn(course::testing::large_sizes({(1 << 22) + 1})),
                         size_name);

}  // namespace
