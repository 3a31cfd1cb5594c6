// drift on 2^23 particles, as the course's AoS kernel and as the student's SoA kernel, in the
// same run. Both rates use the same work (24 useful bytes per particle: x, y, vx, vy read,
// x, y written), so their ratio is the speedup.
//
// The drift updates the particles in place, so before every call Benchmark::time restores them
// (TimedIo::vary): version 0 the original particles, version 1 particles of another seed, so
// that every call's output is known and a remembered one is caught. The calls after the timed
// loop are version 0: each side ends holding one drift of the original particles, compared
// exactly with the host reference.
#include "aos_to_soa.h"

#include <cstdint>
#include <string>
#include <vector>

#include "aos_to_soa_baseline.h"
#include "aos_to_soa_common.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/parallel.h"
#include "course/random.h"

namespace {

// A power of two: vx * dt is exact for the inputs' range, so x + vx * dt rounds once whether
// or not the compiler fuses it, and the device result equals the host reference bit for bit.
constexpr float kDt = 1.0f / 64.0f;

// Field f of every particle, after one drift if `drifted`, into `out` (as long as
// `particles`). The cores share the particles (2^23 of them, 256 MiB), and `out` is reused
// from field to field: serial passes into fresh arrays took over a second.
void field_into(const std::vector<Particle>& particles, int f, bool drifted,
                std::vector<float>& out) {
  course::parallel_chunks(particles.size(), 1 << 16, [&](std::size_t, std::size_t begin,
                                                         std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      float value = reinterpret_cast<const float*>(&particles[i])[f];
      if (drifted && f == 0) value += particles[i].vx * kDt;
      if (drifted && f == 1) value += particles[i].vy * kDt;
      out[i] = value;
    }
  });
}

// Poisons every SoA field, then converts `aos` into it on `stream`. cudaMemset runs on the
// legacy default stream, which the benchmark's non-blocking stream does not wait for: without
// the device-wide synchronisation the poison could land after the conversion.
void poison_and_convert(SoABuffers& soa, const Particle* aos, int n, cudaStream_t stream) {
  CUDA_CHECK(cudaDeviceSynchronize());
  soa.fill_bytes(course::kPoisonByte);
  CUDA_CHECK(cudaDeviceSynchronize());
  aos_to_soa(aos, soa.view(), n, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 23;  // 256 MiB as AoS, five times the L2
  const auto count = static_cast<std::size_t>(n);
  const double bytes = 24.0 * n;
  const std::uint64_t seed = course::make_rng("aos_to_soa_bench")();
  const std::uint64_t other_seed = seed + 1;
  const cudaStream_t stream = bench.stream();
  course::DeviceBuffer<Particle> aos(count);
  fill_particles_hash(aos.data(), n, seed, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto particles = aos.download();

  const course::TimedIo drifts_aos{
      {course::exact_output(aos, "particles")}, [&](cudaStream_t s, int call) {
        fill_particles_hash(aos.data(), n, call % 2 == 0 ? seed : other_seed, s);
      }};
  bench.time(
      "drift_aos", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { drift_aos_baseline(aos.data(), kDt, n, s); }, drifts_aos);
  // The same check as the SoA side, so both measurements are held to one standard.
  std::vector<float> expected(count), actual(count);
  {
    const auto after = aos.download();
    for (int f = 0; f < 8; ++f) {
      field_into(particles, f, true, expected);
      field_into(after, f, false, actual);
      bench.check("drift_aos", course::compare_exact(expected, actual,
                                                     {{}, "aos field " + std::to_string(f)}));
    }
  }

  fill_particles_hash(aos.data(), n, seed, stream);
  SoABuffers soa(n);
  poison_and_convert(soa, aos.data(), n, stream);
  // The drift writes only x and y: keep both versions of them to restore before every call.
  const ParticlesSoA fields = soa.view();
  const std::size_t field_bytes = count * sizeof(float);
  course::DeviceBuffer<float> x_original(count), y_original(count), x_other(count),
      y_other(count);
  CUDA_CHECK(cudaMemcpyAsync(x_original.data(), fields.x, field_bytes, cudaMemcpyDeviceToDevice,
                             stream));
  CUDA_CHECK(cudaMemcpyAsync(y_original.data(), fields.y, field_bytes, cudaMemcpyDeviceToDevice,
                             stream));
  // Positions in [-10, 10), like fill_particles_hash's.
  course::fill_hashed(x_other.data(), count, other_seed, stream, -10.0f, 10.0f);
  course::fill_hashed(y_other.data(), count, other_seed + 1, stream, -10.0f, 10.0f);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const course::TimedIo drifts_soa{
      {course::exact_output(fields.x, field_bytes, "soa.x"),
       course::exact_output(fields.y, field_bytes, "soa.y")},
      [&](cudaStream_t s, int call) {
        const bool original = call % 2 == 0;
        CUDA_CHECK(cudaMemcpyAsync(fields.x, (original ? x_original : x_other).data(),
                                   field_bytes, cudaMemcpyDeviceToDevice, s));
        CUDA_CHECK(cudaMemcpyAsync(fields.y, (original ? y_original : y_other).data(),
                                   field_bytes, cudaMemcpyDeviceToDevice, s));
      }};
  bench.time(
      "drift_soa", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { drift_soa(soa.view(), kDt, n, s); }, drifts_soa);
  const float* const soa_fields[8] = {fields.x,  fields.y,  fields.z,    fields.vx,
                                      fields.vy, fields.vz, fields.mass, fields.charge};
  for (int f = 0; f < 8; ++f) {
    field_into(particles, f, true, expected);
    CUDA_CHECK(cudaMemcpy(actual.data(), soa_fields[f], field_bytes, cudaMemcpyDeviceToHost));
    bench.check("drift_soa", course::compare_exact(expected, actual,
                                                   {{}, "soa field " + std::to_string(f)}));
  }
}
