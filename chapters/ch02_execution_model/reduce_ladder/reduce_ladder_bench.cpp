// Benchmark shared by every rung, on the same 2^28 ints (1 GiB, far beyond the L2), bandwidth
// counted as bytes read. Compiled once per rung with COURSE_EXERCISE (the rung's launcher),
// COURSE_EXERCISE_NAME (its measurement name) and COURSE_EXERCISE_HEADER defined by the build.
//
// Measured, in this order:
//   cub_reduce_sum                      CUB's DeviceReduce::Sum: the baseline of rungs 1 and 8
//   course_v1_neighbored                the course's rung 1 at block 512: rungs 2 to 5
//   course_v5_unroll8_b1024             the course's rung 5 at block 1024: rung 6
//   course_v6_unroll_last_warp_b1024    the course's rung 6 at block 1024: rung 7
//   <rung>, <rung>_b256, <rung>_b1024   the rung at block 512 (graded for rungs 1 to 5 and 8),
//                                       256 and 1024 (graded for rungs 6 and 7)
// Rungs 1 to 4 are limited by instructions and latency, not by DRAM, so their fraction of CUB
// changes with the GPU's bandwidth; a speedup over an earlier rung timed in the same process
// does not. Every measurement's sum is checked, after every call: the calls alternate between
// the input and the input with one element changed, so a sum remembered from an earlier call
// is caught.
#include <cstdint>
#include <string>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "reduce_ladder.h"

#if !defined(COURSE_EXERCISE) || !defined(COURSE_EXERCISE_NAME) || !defined(COURSE_EXERCISE_HEADER)
#error "the build defines COURSE_EXERCISE, COURSE_EXERCISE_NAME and COURSE_EXERCISE_HEADER"
#endif
#include COURSE_EXERCISE_HEADER

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 28;
  const double bytes = static_cast<double>(sizeof(int)) * n;
  auto rng = course::make_rng("reduce_ladder_bench");
  const std::uint64_t seed = rng();

  course::DeviceBuffer<int> in(n);
  course::fill_hashed(in.data(), n, seed, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  // The same hash on the host: the expected sum without downloading 1 GiB.
  long long expected = 0;
  for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(n); ++i)
    expected += course::hashed_int(i, seed);
  const std::vector<long long> want{expected};

  const std::size_t temp_bytes = cub_reduce_sum_temp_bytes(n);
  course::DeviceBuffer<unsigned char> temp(temp_bytes);
  course::DeviceBuffer<long long> out(1);
  // Flipping the lowest bit of one element moves the sum by one.
  const course::TimedIo sums_in{
      {course::exact_output(out, "sum")},
      course::alternate_element(in.data(), static_cast<std::size_t>(seed % n),
                                [](int value) { return value ^ 1; })};
  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "cub_reduce_sum", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { cub_reduce_sum(in.data(), n, out.data(), temp.data(), temp_bytes, s); },
      sums_in);
  bench.check("cub_reduce_sum", course::compare_exact(want, out.download(), {{}, "CUB sum"}));

  // Times one launcher of the ladder's shape at one block size, its *out poisoned first.
  using Launcher = void (*)(const int*, int, int, long long*, long long*, cudaStream_t);
  const auto time_rung = [&](const std::string& label, Launcher launch, int block_size) {
    course::DeviceBuffer<long long> partial(reduce_partial_capacity(n, block_size));
    out.fill_bytes(course::kPoisonByte);
    bench.time(
        label, bytes, course::Unit::GBps,
        [&](cudaStream_t s) { launch(in.data(), n, block_size, partial.data(), out.data(), s); },
        sums_in);
    bench.check(label, course::compare_exact(want, out.download(), {{}, "sum"}));
  };

  time_rung("course_v1_neighbored", course_reduce_v1_neighbored, 512);
  time_rung("course_v5_unroll8_b1024", course_reduce_v5_unroll8, 1024);
  time_rung("course_v6_unroll_last_warp_b1024", course_reduce_v6_unroll_last_warp, 1024);

  const std::string name = COURSE_EXERCISE_NAME;
  for (const int block_size : {512, 256, 1024}) {
    time_rung(block_size == 512 ? name : name + "_b" + std::to_string(block_size),
              COURSE_EXERCISE, block_size);
  }
}
