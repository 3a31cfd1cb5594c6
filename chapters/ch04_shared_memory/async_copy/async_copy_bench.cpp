// Effective bandwidth (bytes read + bytes written) of the student's asynchronously staged
// stencil against the course's synchronously staged one, measured in the same run; a float4
// copy of the same size is reported for context.
#include "async_copy.h"

#include "async_copy_baseline.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 26;  // 256 MiB in and out: far beyond the L2
  const double bytes = 2.0 * sizeof(float) * static_cast<double>(n);
  course::DeviceBuffer<float> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  course::fill_hashed(in.data(), n, course::run_seed(), bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const course::CompareOptions options{{}, "out"};
  const course::Tolerance tolerance{1e-5, 1e-6};

  bench.copy_ceiling(static_cast<std::size_t>(n) * sizeof(float), "copy");

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "sync_tiles", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { async_copy_sync_tiles(in.data(), out.data(), n, s); },
      course::TimedIo{{course::exact_output(out, "out")}});
  // The course's synchronous kernel (tested against the same stencil formula) is the
  // reference for the student's timed output.
  const auto expected = out.download();

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "async_copy", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { async_copy(in.data(), out.data(), n, s); },
      course::TimedIo{{course::close_output(out, tolerance, "out")}});
  bench.check("async_copy", course::compare_close(expected, out.download(), tolerance, options));
}
