// Bandwidth (bytes of input read) of the student's shared-memory reduction against the
// course's in-place global-memory reduction, measured in the same run; CUB and a copy are
// reported for context. Every call's sum is checked, and every other call has one input
// element changed, so a sum remembered from an earlier call is caught.
#include "smem_reduction.h"

#include <cstdint>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "smem_reduction_baseline.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 27;  // 512 MiB of ints: far beyond the L2
  const double bytes = static_cast<double>(n) * sizeof(int);
  const std::uint64_t seed = course::run_seed();
  course::DeviceBuffer<int> in(static_cast<std::size_t>(n));
  course::fill_hashed(in.data(), n, seed, bench.stream());
  course::DeviceBuffer<long long> out(1);
  course::DeviceBuffer<long long> scratch(smem_reduction_global_scratch_size(n));
  course::DeviceBuffer<unsigned char> temp(smem_reduction_cub_temp_bytes(n));
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  // The same values the device fill wrote, recomputed: no 512 MiB download.
  const std::vector<long long> want{course::hashed_int_sum(static_cast<std::size_t>(n), seed)};
  // Flipping the lowest bit of one element moves the sum by one.
  const course::TimedIo sums_in{
      {course::exact_output(out, "sum")},
      course::alternate_element(in.data(), static_cast<std::size_t>(seed % n),
                                [](int value) { return value ^ 1; })};

  bench.copy_ceiling(static_cast<std::size_t>(n) * sizeof(int), "copy");
  bench.time(
      "cub_reduce_sum", bytes, course::Unit::GBps,
      [&](cudaStream_t s) {
        smem_reduction_cub(in.data(), n, out.data(), temp.data(), temp.bytes(), s);
      },
      sums_in);
  bench.check("cub_reduce_sum", course::compare_exact(want, out.download(), {{}, "sum"}));

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "global_inplace", bytes, course::Unit::GBps,
      [&](cudaStream_t s) {
        smem_reduction_global_inplace(in.data(), n, scratch.data(), out.data(), s);
      },
      sums_in);
  bench.check("global_inplace", course::compare_exact(want, out.download(), {{}, "sum"}));

  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "smem_reduction", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { smem_reduction(in.data(), n, 256, out.data(), s); }, sums_in);
  bench.check("smem_reduction", course::compare_exact(want, out.download(), {{}, "sum"}));
}
