// process_chunks against the course's version that allocates each chunk's scratch with
// cudaMalloc and frees it with cudaFree, on the same 128 chunks in the same run. Both rates
// count the same elements, so their ratio is the pool's speedup.
//
// Why these sizes: the chunks hold 2^10 to 2^18 uint32_t (log-uniform, fixed by a salt), so a
// chunk's two kernels run for a few microseconds, about what launching them costs. What a
// chunk costs is then its fixed costs, which is where the two versions differ:
//   * with cudaMalloc / cudaFree, the host allocates, launches the two kernels, and waits in
//     cudaFree until the device has run them; the device idles while the host allocates and
//     launches the next chunk. Each chunk pays the host's calls plus the device's time plus a
//     round trip between them, one after another (15.6 to 20.8 us per chunk on two H100s);
//   * with the pool, the host only enqueues (an allocation and a free from a pool that already
//     holds the memory cost about as much as a launch), the device runs the chunks back to
//     back, and the host's calls overlap the device's work: the slower of the two sets the
//     pace (7.3 to 10.8 us per chunk on two H100s, about what the host's four calls cost).
// Measured ratio 1.72 to 2.16 (six grades, 2026-11-28); full marks at 1.5 leave room for a
// slower host, and no marks at 1.1 sit just above what a version that still waits per chunk
// gets (about 1.0).
//
// After the scored measurements, process_chunks is timed once more with its pool's release
// threshold set to 0 (restored afterwards), for calibration only: on one stream the pool
// reuses the freed scratch within a call whatever the threshold, so the difference is one
// new mapping of memory per call, after the synchronisation that emptied the pool. The tests,
// not this measurement, check the threshold.
//
// Every call is checked (TimedIo): out is poisoned before each call and compared with the
// first call's output; calls alternate between the input and the input with one element
// changed. The last calls use the original input, compared exactly with the CPU reference.
#include "stream_ordered_allocation.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "stream_ordered_allocation_baseline.h"
#include "stream_ordered_allocation_reference.h"

namespace {

constexpr int kChunks = 128;
constexpr double kSmallestLog2 = 10.0;
constexpr double kLargestLog2 = 18.0;

std::vector<std::size_t> bench_offsets() {
  auto rng = course::make_rng("stream_ordered_allocation_bench");
  std::uniform_real_distribution<double> exponent(kSmallestLog2, kLargestLog2);
  std::vector<std::size_t> offsets = {0};
  for (int c = 0; c < kChunks; ++c)
    offsets.push_back(offsets.back() + static_cast<std::size_t>(std::exp2(exponent(rng))));
  return offsets;
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const std::vector<std::size_t> offsets = bench_offsets();
  const std::size_t n = offsets.back();
  course::DeviceBuffer<std::uint32_t> in(n), out(n);
  course::fill_hashed(in.data(), n, course::run_seed(), bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const std::vector<std::uint32_t> expected = chunks_reference(in.download(), offsets);
  const auto check = [&](const std::string& name, const std::string& what) {
    CUDA_CHECK(cudaDeviceSynchronize());
    bench.check(name, course::compare_exact(expected, out.download(), {{}, "out after " + what}));
  };
  course::TimedIo io{{course::exact_output(out, "out")},
                     course::alternate_element(in.data(), n / 3,
                                               [](std::uint32_t word) { return ~word; })};
  const auto pooled = [&](cudaMemPool_t pool) {
    return [&, pool](cudaStream_t s) {
      process_chunks(in.data(), out.data(), offsets.data(), kChunks, pool, s);
    };
  };

  course::TimedIo waits = io;
  waits.waits_for_stream = true;  // cudaFree waits for the device: that is the point
  const course::Measurement& baseline = bench.time(
      "malloc_per_chunk", static_cast<double>(n), course::Unit::Gelems,
      [&](cudaStream_t s) {
        stream_ordered_allocation_malloc_per_chunk(in.data(), out.data(), offsets.data(),
                                                   kChunks, s);
      },
      waits);
  check("malloc_per_chunk", "the course's cudaMalloc / cudaFree version");

  cudaMemPool_t pool = open_scratch_pool();
  if (pool == nullptr) {
    bench.fail("open_scratch_pool returned nullptr");
    return;
  }
  const course::Measurement& measured = bench.time(
      "process_chunks", static_cast<double>(n), course::Unit::Gelems, pooled(pool), io);
  check("process_chunks", "process_chunks");

  std::uint64_t threshold = 0, none = 0;
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &none));
  const course::Measurement& emptied = bench.time("process_chunks_threshold_0",
                                                  static_cast<double>(n), course::Unit::Gelems,
                                                  pooled(pool), io);
  check("process_chunks_threshold_0", "process_chunks on a pool with a threshold of 0");
  CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  close_scratch_pool(pool);

  const auto per_chunk_us = [](const course::Measurement& m) {
    return m.median_ms * 1000.0 / kChunks;
  };
  std::printf("per chunk (%d chunks, %zu elements): cudaMalloc/cudaFree %.2f us, process_chunks "
              "%.2f us (%.2fx), with the threshold at 0 %.2f us (%.3fx process_chunks' time)\n",
              kChunks, n, per_chunk_us(baseline), per_chunk_us(measured),
              baseline.median_ms / measured.median_ms, per_chunk_us(emptied),
              emptied.median_ms / measured.median_ms);
}
