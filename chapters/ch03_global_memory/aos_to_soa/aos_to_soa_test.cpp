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

// Copies host particles into the eight fields of `soa`.
void upload_fields(ParticlesSoA soa, const std::vector<Particle>& particles) {
  float* const fields[8] = {soa.x, soa.y, soa.z, soa.vx, soa.vy, soa.vz, soa.mass, soa.charge};
  for (int f = 0; f < 8; ++f)
    CUDA_CHECK(cudaMemcpy(fields[f], field_of(particles, f).data(),
                          particles.size() * sizeof(float), cudaMemcpyHostToDevice));
  course::testing::wait_for_setup();
}

void check_drift(int n) {
  auto rng = course::testing::case_rng();
  const auto particles = random_particles(n, rng);
  const float dt = course::random_floats(1, 0.001f, 0.1f, rng)[0];
  SoABuffers soa(n);
  ParticlesSoA view = soa.view();
  upload_fields(view, particles);
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

using course::testing::size_name;
INSTANTIATE_TEST_SUITE_P(Small, AosToSoa, ::testing::ValuesIn(course::testing::small_sizes({4099})),
                         size_name);
INSTANTIATE_TEST_SUITE_P(Large, AosToSoa,
                         ::testing::ValuesIn(course::testing::large_sizes({(1 << 22) + 1})),
                         size_name);

// Every field of `soa`, for keeps_to_stream to watch.
std::vector<course::testing::Watched> watched_fields(ParticlesSoA soa, int n) {
  float* const fields[8] = {soa.x, soa.y, soa.z, soa.vx, soa.vy, soa.vz, soa.mass, soa.charge};
  std::vector<course::testing::Watched> watched;
  for (int f = 0; f < 8; ++f)
    watched.push_back({fields[f], n * sizeof(float), std::string("soa.") + kFieldNames[f]});
  return watched;
}

// What drift_soa leaves in x (field 0) or y (field 1).
std::vector<float> drifted(const std::vector<Particle>& particles, int field, float dt) {
  auto moved = field_of(particles, field);
  for (std::size_t i = 0; i < particles.size(); ++i)
    moved[i] += (field == 0 ? particles[i].vx : particles[i].vy) * dt;
  return moved;
}

// Checks x and y after drift_soa (with the tolerance of check_drift) and every other field
// unchanged.
void expect_drifted(SoABuffers& soa, const std::vector<Particle>& particles, float dt,
                    const std::string& when) {
  const course::Tolerance tolerance{1e-5, 1e-5};
  EXPECT_TRUE(course::testing::close(drifted(particles, 0, dt), soa.download(0), tolerance,
                                     {{}, "x after drift" + when}));
  EXPECT_TRUE(course::testing::close(drifted(particles, 1, dt), soa.download(1), tolerance,
                                     {{}, "y after drift" + when}));
  for (int f = 2; f < 8; ++f)
    EXPECT_TRUE(course::testing::equal(
        field_of(particles, f), soa.download(f),
        {{}, std::string(kFieldNames[f]) + " (must not change)" + when}));
}

// keeps_to_stream holds the stream shut while the launcher returns: a launch anywhere else
// (the default stream, a stream of its own) writes the fields meanwhile, and waiting on the
// stream is reported. RunsOnTheGivenStream is aos_to_soa's case.
TEST(AosToSoaEdge, RunsOnTheGivenStream) {
  const int n = 200003;
  auto rng = course::testing::case_rng();
  const auto particles = random_particles(n, rng);
  course::DeviceBuffer<Particle> aos(particles);
  SoABuffers soa(n);
  soa.fill_bytes(course::kPoisonByte);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { aos_to_soa(aos.data(), soa.view(), n, s); },
      watched_fields(soa.view(), n)));
  for (int f = 0; f < 8; ++f)
    EXPECT_TRUE(course::testing::equal(field_of(particles, f), soa.download(f),
                                       {{}, std::string("soa.") + kFieldNames[f]}));
}

TEST(AosToSoaEdge, DriftRunsOnTheGivenStream) {
  const int n = 200003;
  auto rng = course::testing::case_rng();
  const auto particles = random_particles(n, rng);
  const float dt = course::random_floats(1, 0.001f, 0.1f, rng)[0];
  SoABuffers soa(n);
  upload_fields(soa.view(), particles);
  ASSERT_TRUE(course::testing::keeps_to_stream(
      [&](cudaStream_t s) { drift_soa(soa.view(), dt, n, s); }, watched_fields(soa.view(), n)));
  expect_drifted(soa, particles, dt, "");
}

// Same buffers, new contents: a launcher that remembers its last answer by pointer or by
// size returns the first call's fields the second time. CallsAgainWithNewInputs is
// aos_to_soa's case.
TEST(AosToSoaEdge, CallsAgainWithNewInputs) {
  const int n = 100003;
  auto rng = course::testing::case_rng();
  course::DeviceBuffer<Particle> aos(n);
  SoABuffers soa(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto particles = random_particles(n, rng);
    aos.upload(particles);
    soa.fill_bytes(course::kPoisonByte);
    aos_to_soa(aos.data(), soa.view(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int f = 0; f < 8; ++f)
      EXPECT_TRUE(course::testing::equal(
          field_of(particles, f), soa.download(f),
          {{}, std::string("soa.") + kFieldNames[f] + " after the " + call}));
  }
}

TEST(AosToSoaEdge, DriftCallsAgainWithNewInputs) {
  // drift_soa works in place: each call starts from freshly uploaded fields and a new dt.
  const int n = 100003;
  auto rng = course::testing::case_rng();
  SoABuffers soa(n);
  for (const std::string call : {"first call", "second call"}) {
    const auto particles = random_particles(n, rng);
    const float dt = course::random_floats(1, 0.001f, 0.1f, rng)[0];
    upload_fields(soa.view(), particles);
    drift_soa(soa.view(), dt, n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    expect_drifted(soa, particles, dt, " (" + call + ")");
  }
}

}  // namespace
