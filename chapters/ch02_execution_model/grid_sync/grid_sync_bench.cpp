// jacobi_grid_sync (one cooperative launch, a grid barrier between sweeps) against the course's
// course_per_sweep (one launch per sweep) on the same 2^22 ints and 200 sweeps, both measured
// in the same run and rated in element updates per second (n x sweeps). Your own
// jacobi_per_sweep is timed too, for comparison only. A second pair on 2^16 ints, where a
// sweep is too short to hide what a launch or a barrier costs, is printed and not graded.
//
// Every call is checked: the calls alternate between the input and the input with its middle
// element moved by 2^28, a change 200 sweeps spread out but never round away.
#include "grid_sync.h"

#include <algorithm>
#include <string>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/parallel.h"
#include "course/random.h"
#include "grid_sync_baseline.h"

namespace {

constexpr int kSweeps = 200;

using Jacobi = void (*)(const int*, int, int, int*, int*, cudaStream_t);

// The sweeps on the host, as in the tests: the reference the last calls are compared with.
// The cores share the elements (2^22 of them, 200 sweeps). Each range sweeps a copy of itself
// widened by `sweeps` elements each side: an error at a cut moves one element per sweep, so it
// never reaches the range, which ends exactly as the whole array's sweeps leave it.
std::vector<int> host_sweeps(const std::vector<int>& values, int sweeps) {
  const std::size_t n = values.size();
  const auto halo = static_cast<std::size_t>(std::max(sweeps, 0));
  std::vector<int> result(n);
  course::parallel_chunks(n, 1 << 14, [&](std::size_t, std::size_t begin, std::size_t end) {
    const std::size_t lo = begin > halo ? begin - halo : 0;
    const std::size_t hi = std::min(n, end + halo);
    std::vector<int> u(values.begin() + lo, values.begin() + hi);
    std::vector<int> next(u);
    for (int s = 0; s < sweeps; ++s) {
      for (std::size_t i = 1; i + 1 < u.size(); ++i)
        next[i] = (u[i - 1] + 2 * u[i] + u[i + 1]) >> 2;
      u.swap(next);
    }
    std::copy(u.begin() + (begin - lo), u.begin() + (end - lo), result.begin() + begin);
  });
  return result;
}

void measure_size(course::Benchmark& bench, int n, const std::string& suffix,
                  bool with_yours_per_sweep) {
  auto rng = course::make_rng("grid_sync_bench" + suffix);
  const std::vector<int> values = course::random_ints(n, 0, kJacobiValueLimit - 1, rng);
  const std::vector<int> expected = host_sweeps(values, kSweeps);
  course::DeviceBuffer<int> in(values), out(n), scratch(n);
  const course::TimedIo io{{course::exact_output(out, "out")},
                           course::alternate_element(in.data(), values.size() / 2, [](int v) {
                             return v ^ (1 << 28);
                           })};
  const double updates = static_cast<double>(n) * kSweeps;
  auto measure = [&](const std::string& name, Jacobi jacobi) {
    out.fill_bytes(course::kPoisonByte);
    scratch.fill_bytes(course::kPoisonByte);
    bench.time(
        name, updates, course::Unit::Gelems,
        [&](cudaStream_t s) { jacobi(in.data(), n, kSweeps, out.data(), scratch.data(), s); },
        io);
    bench.check(name, course::compare_exact(expected, out.download(), {{}, "out of " + name}));
  };
  measure("course_per_sweep" + suffix, course_jacobi_per_sweep);
  if (with_yours_per_sweep) measure("jacobi_per_sweep" + suffix, jacobi_per_sweep);
  measure("jacobi_grid_sync" + suffix, jacobi_grid_sync);
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  measure_size(bench, 1 << 22, "", true);
  measure_size(bench, 1 << 16, "_n65536", false);
}
