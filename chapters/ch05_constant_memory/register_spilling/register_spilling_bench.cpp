// Pixels per second of the student's register-only 5x5 median filter against the course's
// version that sorts each window in a local-memory array, on the same 2048 x 2048 image in the
// same run. The filter is bound by its instructions (25 loads and a sort per pixel), not by
// DRAM, so the rate is in pixels (Gelem/s) rather than bytes.
#include "register_spilling.h"

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "register_spilling_baseline.h"
#include "register_spilling_reference.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int rows = 2048, cols = 2048;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  course::DeviceBuffer<float> in(n), out(n);
  course::fill_hashed(in.data(), n, course::run_seed(), bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  // Both timed outputs are checked against the host filter (about a second of CPU, once).
  const auto expected = register_spilling_reference(in.download(), rows, cols);
  const course::CompareOptions options{{static_cast<std::size_t>(rows),
                                        static_cast<std::size_t>(cols)}, "out"};

  out.fill_bytes(course::kPoisonByte);
  const course::TimedIo writes_out{{course::exact_output(out, "out")}};
  bench.time(
      "median_local_array", static_cast<double>(n), course::Unit::Gelems,
      [&](cudaStream_t s) { register_spilling_local_array(in.data(), out.data(), rows, cols, s); },
      writes_out);
  bench.check("median_local_array", course::compare_exact(expected, out.download(), options));

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "median_filter_5x5", static_cast<double>(n), course::Unit::Gelems,
      [&](cudaStream_t s) { median_filter_5x5(in.data(), out.data(), rows, cols, s); },
      writes_out);
  bench.check("median_filter_5x5", course::compare_exact(expected, out.download(), options));
}
