// Not graded on speed: reports the throughput of both kernels for context (the exercise is
// about correctness), and checks their timed output.
#include "barriers.h"

#include <climits>
#include <vector>

#include "barriers_reference.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 24;
  auto rng = course::make_rng("barriers_bench");
  const auto host = course::random_ints(static_cast<std::size_t>(n), INT_MIN, INT_MAX, rng);
  course::DeviceBuffer<int> in(host), rotated(static_cast<std::size_t>(n));
  course::DeviceBuffer<long long> sums(static_cast<std::size_t>(n));

  rotated.fill_bytes(course::kPoisonByte);
  bench.time(
      "barriers_rotate", n, course::Unit::Gelems,
      [&](cudaStream_t s) { barriers_rotate(in.data(), rotated.data(), n, s); },
      course::TimedIo{{course::exact_output(rotated, "rotated")}});
  bench.check("barriers_rotate", course::compare_exact(barriers_rotate_reference(host),
                                                       rotated.download(), {{}, "rotated"}));
  sums.fill_bytes(course::kPoisonByte);
  bench.time(
      "barriers_segment_sum", n, course::Unit::Gelems,
      [&](cudaStream_t s) { barriers_segment_sum(in.data(), sums.data(), n, s); },
      course::TimedIo{{course::exact_output(sums, "segment sums")}});
  bench.check("barriers_segment_sum",
              course::compare_exact(barriers_segment_sum_reference(host), sums.download(),
                                    {{}, "segment sums"}));
}
