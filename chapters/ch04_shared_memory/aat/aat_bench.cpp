// Throughput of the student's C = A A^T against two course-owned versions measured in the same
// run: the naive kernel reading A with a stride of k floats, and the shared-memory version with
// an unpadded transposed tile (coalesced, but with a 32-way bank conflict on every tile store).
// The product costs far more than a copy of C, so every call is checked with one element of A
// changed in every other call: a C remembered from an earlier call is caught.
#include "aat.h"

#include "aat_baseline.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  // A is 4096 x 128 (2 MiB: it stays in L2), C is 4096 x 4096 (64 MiB). With k = 128 each
  // block goes through four k-tiles, so the tile stores and reads, not the write of C,
  // decide the time.
  const int m = 4096, k = 128;
  const std::size_t a_n = static_cast<std::size_t>(m) * k;
  const std::size_t c_n = static_cast<std::size_t>(m) * m;
  const double flops = 2.0 * static_cast<double>(c_n) * k;
  course::DeviceBuffer<float> a(a_n), c(c_n);
  course::fill_hashed(a.data(), a_n, course::run_seed(), bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const course::CompareOptions options{{static_cast<std::size_t>(m), static_cast<std::size_t>(m)},
                                       "C"};
  // Sums of 128 products in a different order: float rounding stays far below this.
  const course::Tolerance tolerance{1e-4, 1e-4};
  // Adding 1 to one element of A changes a row and a column of C.
  const course::TimedIo writes_c{
      {course::close_output(c, tolerance, "C")},
      course::alternate_element(a.data(), course::run_seed() % a_n,
                                [](float value) { return value + 1.0f; })};

  c.fill_bytes(course::kPoisonByte);
  bench.time(
      "aat_naive", flops, course::Unit::TFLOPs,
      [&](cudaStream_t s) { aat_naive(a.data(), c.data(), m, k, s); }, writes_c);
  // The naive kernel (the plainest code, tested against the CPU reference in the tests'
  // shapes) is the reference for the other two.
  const auto expected = c.download();

  c.fill_bytes(course::kPoisonByte);
  bench.time(
      "aat_tiled_unpadded", flops, course::Unit::TFLOPs,
      [&](cudaStream_t s) { aat_tiled_unpadded(a.data(), c.data(), m, k, s); }, writes_c);
  bench.check("aat_tiled_unpadded", course::compare_close(expected, c.download(), tolerance,
                                                          options));

  c.fill_bytes(course::kPoisonByte);
  bench.time(
      "aat", flops, course::Unit::TFLOPs,
      [&](cudaStream_t s) { aat(a.data(), c.data(), m, k, s); }, writes_c);
  bench.check("aat", course::compare_close(expected, c.download(), tolerance, options));
}
