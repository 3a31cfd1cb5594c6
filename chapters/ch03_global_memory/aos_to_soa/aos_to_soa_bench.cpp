// drift on 2^25 particles, as the course's AoS kernel and as the student's SoA kernel, in the
// same run. Both rates use the same work (24 useful bytes per particle: x, y, vx, vy read,
// x, y written), so their ratio is the speedup.
#include "aos_to_soa.h"

#include <string>
#include <vector>

#include "aos_to_soa_common.h"
#include "course/bench.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 25;  // 1 GiB as AoS, far beyond the L2
  const double bytes = 24.0 * n;
  // dt = 0 keeps the data unchanged across repeats, so the last timed run can be checked.
  const float dt = 0.0f;
  course::DeviceBuffer<Particle> aos(n);
  fill_particles_hash(aos.data(), n, course::make_rng("aos_to_soa_bench")(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  bench.time("drift_aos", bytes, course::Unit::GBps,
             [&](cudaStream_t s) { drift_aos_baseline(aos.data(), dt, n, s); });

  SoABuffers soa(n);
  soa.fill_bytes(course::kPoisonByte);
  aos_to_soa(aos.data(), soa.view(), n, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  bench.time("drift_soa", bytes, course::Unit::GBps,
             [&](cudaStream_t s) { drift_soa(soa.view(), dt, n, s); });
  // Converted and drifted by 0: every field must still equal the original.
  const auto particles = aos.download();
  for (int f = 0; f < 8; ++f)
    bench.check("drift_soa", course::compare_exact(field_of(particles, f), soa.download(f),
                                                   {{}, "soa field " + std::to_string(f)}));
}
