// Managed memory with and without prefetching, on the same 64 MiB in and 64 MiB out. Before
// every timed run, untimed, both ranges go back to host memory, so each run has to move the
// data to the GPU again, and the input alternates between two versions (one element differs),
// so a call that skipped the work shows. Timing the trip back as well (as this benchmark once
// did) added the same large cost to both measurements and hid the prefetch's gain in noise: a
// prefetch enqueued after the kernel once scored 1.20x on an H200. Rates count the useful
// bytes: n floats read and n written.
#include "zero_copy_unified.h"

#include <cstring>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"
#include "zero_copy_unified_common.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 24;  // 64 MiB per buffer: small next to any card's memory
  const float factor = 1.5f;
  const float offset = -0.25f;
  const double bytes = 2.0 * sizeof(float) * n;
  auto rng = course::make_rng("zero_copy_unified_bench");
  const auto values = course::random_floats(n, -1.f, 1.f, rng);
  const auto expected = saxpy_reference(values.data(), n, factor, offset);
  const course::Tolerance tolerance{1e-6, 1e-6};

  int concurrent = 0;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device));
  bench.require("concurrent_managed_access", concurrent != 0,
                "this GPU/OS cannot prefetch managed memory (cudaDevAttrConcurrentManagedAccess "
                "is 0)");
  if (concurrent == 0) return;

  course::ManagedBuffer<float> in(n), out(n);
  std::memcpy(in.data(), values.data(), n * sizeof(float));
  auto measure = [&](const char* name, void (*call)(const float*, float*, float, float, int,
                                                    cudaStream_t)) {
    std::memset(out.data(), course::kPoisonByte, n * sizeof(float));
    const auto back_to_host = [&](cudaStream_t s, int call_number) {
      CUDA_CHECK(cudaStreamSynchronize(s));  // the host writes the input next
      in.data()[0] = call_number % 2 == 0 ? values[0] : values[0] + 1.0f;
      prefetch_to_host(in.data(), in.bytes(), s);
      prefetch_to_host(out.data(), out.bytes(), s);
    };
    bench.time(
        name, bytes, course::Unit::GBps,
        [&](cudaStream_t s) { call(in.data(), out.data(), factor, offset, n, s); },
        course::TimedIo{{course::exact_output(out, "out")}, back_to_host});
    CUDA_CHECK(cudaDeviceSynchronize());
    bench.check(name, course::compare_close(expected.data(), out.data(), n, tolerance,
                                            {{}, "out"}));
  };
  measure("managed_on_demand", saxpy_managed);
  measure("managed_prefetched", saxpy_managed_prefetched);

  // Zero-copy next to plain device memory, for the notes (not graded).
  course::PinnedBuffer<float> mapped(n, cudaHostAllocMapped);
  std::memcpy(mapped.data(), values.data(), n * sizeof(float));
  course::DeviceBuffer<float> dev_out(n);
  dev_out.fill_bytes(course::kPoisonByte);
  bench.time(
      "zero_copy", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { saxpy_zero_copy(mapped.data(), dev_out.data(), factor, offset, n, s); },
      course::TimedIo{{course::exact_output(dev_out, "out")}});
  bench.check("zero_copy", course::compare_close(expected, dev_out.download(), tolerance,
                                                 {{}, "out"}));
}
