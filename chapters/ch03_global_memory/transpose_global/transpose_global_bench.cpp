// 8192 x 8192 floats (256 MiB each way). Rates count bytes read plus bytes written; the copy
// ceiling copies the same 256 MiB. Every student version is checked against the course's
// naive transpose of the same input.
#include "transpose_global.h"
#include "transpose_global_baseline.h"

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int nx = 8192;
  const int ny = 8192;
  const std::size_t n = static_cast<std::size_t>(nx) * ny;
  const double bytes = 2.0 * sizeof(float) * n;
  course::DeviceBuffer<float> in(n), out(n);
  course::fill_hashed(in.data(), n, course::make_rng("transpose_global_bench")(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  bench.copy_ceiling(n * sizeof(float));
  const course::TimedIo writes_out{{course::exact_output(out, "out")}};
  bench.time(
      "naive_read_rows", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { transpose_naive_baseline(in.data(), out.data(), nx, ny, s); },
      writes_out);
  // Kept and compared on the device, copied to the host for compare_exact's report only where
  // they differ: five host copies of 256 MiB and four comparisons took over a second.
  course::DeviceBuffer<float> expected(n);
  CUDA_CHECK(cudaMemcpyAsync(expected.data(), out.data(), expected.bytes(),
                             cudaMemcpyDeviceToDevice, bench.stream()));
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));

  const struct {
    const char* name;
    void (*run)(const float*, float*, int, int, cudaStream_t);
  } variants[] = {{"transpose_read_rows", transpose_read_rows},
                  {"transpose_read_columns", transpose_read_columns},
                  {"transpose_unrolled", transpose_unrolled},
                  {"transpose_diagonal", transpose_diagonal}};
  for (const auto& v : variants) {
    out.fill_bytes(course::kPoisonByte);
    bench.time(
        v.name, bytes, course::Unit::GBps,
        [&](cudaStream_t s) { v.run(in.data(), out.data(), nx, ny, s); }, writes_out);
    bench.check_on_device(v.name, expected, out,
                          {{static_cast<std::size_t>(nx), static_cast<std::size_t>(ny)}, "out"});
  }
}
