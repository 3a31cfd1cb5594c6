// Throughput of the student's conflict-free Gram kernels against the course's conflicted ones
// (same algorithm, unpadded tile), measured in the same run. Each tile is loaded once and read
// from shared memory 32 or 64 times per element, so shared-memory bandwidth, not DRAM, sets the
// pace, and a 32-way conflict costs up to 32 passes per read. A copy of the output is far
// cheaper than the work, so every call is checked with one input element changed in every
// other call: an output remembered from an earlier call is caught.
#include "bank_conflicts.h"

#include <functional>
#include <string>

#include "bank_conflicts_baseline.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"

namespace {

using Launcher = std::function<void(const float*, float*, int, cudaStream_t)>;

void compare_pair(course::Benchmark& bench, const std::string& label, int tiles, int cols,
                  const Launcher& conflicted, const Launcher& student) {
  const std::size_t in_n = static_cast<std::size_t>(tiles) * kBankTileRows * cols;
  const std::size_t out_n = static_cast<std::size_t>(tiles) * kBankTileRows * kBankTileRows;
  const double flops = 2.0 * static_cast<double>(out_n) * cols;
  course::DeviceBuffer<float> in(in_n), out(out_n);
  course::fill_hashed(in.data(), in_n, course::run_seed() + cols, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const course::Tolerance tolerance{1e-4, 1e-5};
  // Adding 1 to one element of a tile changes a row and a column of its G.
  const course::TimedIo writes_out{
      {course::close_output(out, tolerance, "out of " + label)},
      course::alternate_element(in.data(), course::run_seed() % in_n,
                                [](float value) { return value + 1.0f; })};

  const std::string base_name = label + "_conflicted";
  const std::string name = "bank_conflicts_" + label;
  out.fill_bytes(course::kPoisonByte);
  bench.time(
      base_name, flops, course::Unit::TFLOPs,
      [&](cudaStream_t s) { conflicted(in.data(), out.data(), tiles, s); }, writes_out);
  // The course's kernel is the reference for the timed student output (tested separately
  // against a double-precision CPU reference); summation order may differ, hence a tolerance.
  const auto expected = out.download();
  out.fill_bytes(course::kPoisonByte);
  bench.time(
      name, flops, course::Unit::TFLOPs,
      [&](cudaStream_t s) { student(in.data(), out.data(), tiles, s); }, writes_out);
  bench.check(name, course::compare_close(expected, out.download(), tolerance,
                                          {{}, "out of " + name}));
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  // 32768 square tiles (128 MiB in and out) and 16384 rectangular ones (128 MiB in): enough
  // blocks to fill every SM many times over, a few milliseconds per run.
  compare_pair(bench, "square", 32768, kBankSquareCols, bank_conflicts_square_conflicted,
               bank_conflicts_square);
  compare_pair(bench, "rect", 16384, kBankRectCols, bank_conflicts_rect_conflicted,
               bank_conflicts_rect);
}
