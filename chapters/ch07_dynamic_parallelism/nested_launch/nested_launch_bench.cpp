// Not graded on speed (the manifest has no [[performance]] entry): the exercise is about
// where the launches come from, which the technique rule and the tests check. Reports how
// fast the largest tree the API allows is recorded (records per second), for the curious:
// 64 chains of 11 grids, 640 launches from the device.
#include "nested_launch.h"

#include <string>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/check.h"
#include "nested_launch_reference.h"

void course::run_benchmark(course::Benchmark& bench) {
  constexpr int kBlocks = 64, kThreads = 1024, kMaxDepth = 30;
  const std::size_t n = nested_launch_record_count(kBlocks, kThreads, kMaxDepth);
  course::DeviceBuffer<LaunchRecord> records(n);
  course::DeviceBuffer<int> count(1);

  // The records' order changes from call to call (it is whatever the atomics gave), so only
  // the count is compared call by call; the records are checked as a multiset at the end.
  bench.time(
      "nested_tree", static_cast<double>(n), course::Unit::Gelems,
      [&](cudaStream_t s) {
        CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(int), s));
        record_nested_launches(records.data(), count.data(), kBlocks, kThreads, kMaxDepth, s);
      },
      course::TimedIo{{course::exact_output(count, "count")}});
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string differences = describe_record_differences(
      nested_launch_reference(kBlocks, kThreads, kMaxDepth), records.download(), kMaxDepth);
  bench.require("nested_tree_records", differences.empty(),
                "the last call's records must form the whole tree" +
                    (differences.empty() ? std::string() : ": " + differences));
}
