// drift on 2^25 particles, as the course's AoS kernel and as the student's SoA kernel, in the
// same run. Both rates use the same work (24 useful bytes per particle: x, y, vx, vy read,
// x, y written), so their ratio is the speedup.
//
// Benchmark::time runs the drift an unknown number of times (warm-up plus repeats), so the
// timed buffers end in a state that depends on the repeat count. Each side is therefore
// checked afterwards on a fresh copy: regenerate the particles, drift once, compare exactly
// with the host reference for one drift.
#include "aos_to_soa.h"

#include <cstdint>
#include <string>
#include <vector>

#include "aos_to_soa_baseline.h"
#include "aos_to_soa_common.h"
#include "course/bench.h"
#include "course/random.h"

namespace {

// A power of two: vx * dt is exact for the inputs' range, so x + vx * dt rounds once whether
// or not the compiler fuses it, and the device result equals the host reference bit for bit.
constexpr float kDt = 1.0f / 64.0f;

// Field f of every particle after one drift.
std::vector<float> drifted_field(const std::vector<Particle>& particles, int f) {
  std::vector<float> out = field_of(particles, f);
  if (f == 0)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += particles[i].vx * kDt;
  if (f == 1)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += particles[i].vy * kDt;
  return out;
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
  const int n = 1 << 25;  // 1 GiB as AoS, far beyond the L2
  const double bytes = 24.0 * n;
  const std::uint64_t seed = course::make_rng("aos_to_soa_bench")();
  const cudaStream_t stream = bench.stream();
  course::DeviceBuffer<Particle> aos(n);
  // Regenerates the original particles (the fill is a pure function of seed and index).
  auto fresh_particles = [&] {
    fill_particles_hash(aos.data(), n, seed, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  fresh_particles();
  const auto particles = aos.download();

  bench.time("drift_aos", bytes, course::Unit::GBps,
             [&](cudaStream_t s) { drift_aos_baseline(aos.data(), kDt, n, s); });
  // The same check as the SoA side, so both measurements are held to one standard.
  fresh_particles();
  drift_aos_baseline(aos.data(), kDt, n, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  {
    const auto after = aos.download();
    for (int f = 0; f < 8; ++f)
      bench.check("drift_aos", course::compare_exact(drifted_field(particles, f),
                                                     field_of(after, f),
                                                     {{}, "aos field " + std::to_string(f)}));
  }

  fresh_particles();
  SoABuffers soa(n);
  poison_and_convert(soa, aos.data(), n, stream);
  bench.time("drift_soa", bytes, course::Unit::GBps,
             [&](cudaStream_t s) { drift_soa(soa.view(), kDt, n, s); });
  // aos was not touched since fresh_particles(), so this converts the original particles.
  poison_and_convert(soa, aos.data(), n, stream);
  drift_soa(soa.view(), kDt, n, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int f = 0; f < 8; ++f)
    bench.check("drift_soa", course::compare_exact(drifted_field(particles, f), soa.download(f),
                                                   {{}, "soa field " + std::to_string(f)}));
}
