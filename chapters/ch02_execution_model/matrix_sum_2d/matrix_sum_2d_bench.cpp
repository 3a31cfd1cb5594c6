// Effective bandwidth of matrix_sum_2d (two floats read, one written per element) against the
// in-run copy ceiling, plus a sweep of block shapes with the course's one-element-per-thread
// kernel (sweep_<x>x<y>): shapes whose x side is under 32 leave parts of every 32-byte sector
// a warp touches unused, and the table shows what that costs.
#include "matrix_sum_2d.h"

#include <string>
#include <utility>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "matrix_sum_2d_baseline.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int nx = 8192, ny = 8192;  // 256 MiB per matrix
  const std::size_t count = static_cast<std::size_t>(nx) * ny;
  const double bytes = 3.0 * sizeof(float) * static_cast<double>(count);
  auto rng = course::make_rng("matrix_sum_2d_bench");
  course::DeviceBuffer<float> a(count), b(count), c(count), reference(count);
  course::fill_hashed(a.data(), count, rng(), bench.stream());
  course::fill_hashed(b.data(), count, rng(), bench.stream());
  matrix_sum_2d_with_block(a.data(), b.data(), reference.data(), nx, ny, dim3(32, 8),
                           bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));

  bench.copy_ceiling(static_cast<std::size_t>(bytes / 2));
  const course::TimedIo writes_c{{course::exact_output(c, "c")}};
  c.fill_bytes(course::kPoisonByte);
  bench.time(
      "matrix_sum_2d", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { matrix_sum_2d(a.data(), b.data(), c.data(), nx, ny, s); },
      writes_c);
  bench.check_on_device("matrix_sum_2d", reference, c, {{ny, nx}, "c"});

  const std::vector<std::pair<int, int>> shapes = {
      {32, 32}, {32, 16}, {32, 8}, {64, 8}, {128, 4}, {256, 1}, {16, 32},
      {16, 16}, {8, 64},  {8, 32}, {4, 64}, {1, 256}};
  for (const auto& [x, y] : shapes) {
    const std::string name = "sweep_" + std::to_string(x) + "x" + std::to_string(y);
    c.fill_bytes(course::kPoisonByte);
    bench.time(
        name, bytes, course::Unit::GBps,
        [&, x = x, y = y](cudaStream_t s) {
          matrix_sum_2d_with_block(a.data(), b.data(), c.data(), nx, ny,
                                   dim3(static_cast<unsigned>(x), static_cast<unsigned>(y)), s);
        },
        writes_c);
    bench.check_on_device(name, reference, c, {{ny, nx}, name});
  }
}
