// Effective bandwidth (bytes read + bytes written) of the student's tiled transpose against a
// copy with the same launch shape, measured in the same run. The naive transpose and the
// float4 copy ceiling are reported for context.
#include "transpose_shared.h"

#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "transpose_shared_baseline.h"
#include "transpose_shared_reference.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int rows = 8192, cols = 8192;  // 256 MiB per matrix: far beyond the L2
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const double bytes = 2.0 * sizeof(float) * static_cast<double>(n);
  course::DeviceBuffer<float> in(n), out(n);
  course::fill_hashed(in.data(), n, course::run_seed(), bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const auto in_host = in.download();

  bench.copy_ceiling(n * sizeof(float), "copy_float4");
  const course::TimedIo writes_out{{course::exact_output(out, "out")}};
  bench.time(
      "copy_same_shape", bytes, course::Unit::GBps,
      [&](cudaStream_t s) {
        transpose_shared_copy_same_shape(in.data(), out.data(), rows, cols, s);
      },
      writes_out);
  // Compared on the device, and copied to the host for compare_exact's report only when they
  // differ: three host copies and comparisons of 256 MiB took seconds.
  bench.check_on_device("copy_same_shape", in, out, {{}, "copy"});

  const course::DeviceBuffer<float> expected(transpose_shared_reference(in_host, rows, cols));
  const course::CompareOptions options{{static_cast<std::size_t>(cols),
                                        static_cast<std::size_t>(rows)}, "out"};
  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "transpose_naive", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { transpose_shared_naive(in.data(), out.data(), rows, cols, s); },
      writes_out);
  bench.check_on_device("transpose_naive", expected, out, options);

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "transpose_shared", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { transpose_shared(in.data(), out.data(), rows, cols, s); },
      writes_out);
  bench.check_on_device("transpose_shared", expected, out, options);
}
