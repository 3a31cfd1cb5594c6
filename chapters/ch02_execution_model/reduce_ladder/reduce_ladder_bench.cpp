// Benchmark shared by every rung: the rung and CUB's DeviceReduce::Sum on the same 2^28 ints
// (1 GiB, far beyond the L2), bandwidth counted as bytes read. Compiled once per rung with
// COURSE_EXERCISE (the rung's launcher), COURSE_EXERCISE_NAME (its measurement name) and
// COURSE_EXERCISE_HEADER defined by the build. The graded measurement uses block_size 512; the
// same rung at 256 and 1024 is reported too (suffix _b256, _b1024) to show how the block size
// moves each rung.
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
  out.fill_bytes(course::kPoisonByte);
  bench.time("cub_reduce_sum", bytes, course::Unit::GBps, [&](cudaStream_t s) {
    cub_reduce_sum(in.data(), n, out.data(), temp.data(), temp_bytes, s);
  });
  bench.check("cub_reduce_sum", course::compare_exact(want, out.download(), {{}, "CUB sum"}));

  const std::string name = COURSE_EXERCISE_NAME;
  for (const int block_size : {512, 256, 1024}) {
    const std::string label = block_size == 512 ? name : name + "_b" + std::to_string(block_size);
    course::DeviceBuffer<long long> partial(reduce_partial_capacity(n, block_size));
    out.fill_bytes(course::kPoisonByte);
    bench.time(label, bytes, course::Unit::GBps, [&](cudaStream_t s) {
      COURSE_EXERCISE(in.data(), n, block_size, partial.data(), out.data(), s);
    });
    bench.check(label, course::compare_exact(want, out.download(), {{}, "sum"}));
  }
}
