// single_pass_reduce against the course's two-launch reduction on the same 2^22 ints (16 MiB,
// read from DRAM: the harness flushes the L2 before every repeat), both rated on the bytes
// read, in the same run. At this size the second launch and the wait between the two kernels
// are a visible share of the time; far larger inputs are limited by the memory alone.
//
// Every call's sum is checked: the calls alternate between the input and the input with one
// element changed. The scratch is zeroed once, before the first call, as the header says, and
// its counter must still read 0 after the last one.
#include "single_pass_reduce.h"

#include <climits>
#include <numeric>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"
#include "single_pass_reduce_baseline.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 22;
  const double bytes = static_cast<double>(sizeof(int)) * n;
  auto rng = course::make_rng("single_pass_reduce_bench");
  // 16 MiB are quick to draw on the host, which then knows the sum without a download.
  const std::vector<int> values = course::random_ints(n, INT_MIN, INT_MAX, rng);
  const std::vector<long long> want{std::accumulate(values.begin(), values.end(), 0LL)};
  course::DeviceBuffer<int> in(values);

  course::DeviceBuffer<long long> out(1);
  // Calls alternate between the input and the input with the lowest bit of its middle element
  // flipped (a sum one apart). Only *out is poisoned before each call: the scratch must keep
  // what the kernel leaves in it.
  const course::TimedIo sums{{course::exact_output(out, "sum")},
                             course::alternate_element(in.data(), values.size() / 2,
                                                       [](int value) { return value ^ 1; })};

  course::DeviceBuffer<long long> partial(kSinglePassMaxBlocks);
  out.fill_bytes(course::kPoisonByte);
  bench.time(
      "two_pass_reduce", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { two_pass_reduce(in.data(), n, partial.data(), out.data(), s); },
      sums);
  bench.check("two_pass_reduce", course::compare_exact(want, out.download(), {{}, "sum"}));

  course::DeviceBuffer<unsigned char> scratch(single_pass_scratch_bytes());
  scratch.fill_bytes(0);
  out.fill_bytes(course::kPoisonByte);
  CUDA_CHECK(cudaDeviceSynchronize());
  bench.time(
      "single_pass_reduce", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { single_pass_reduce(in.data(), n, scratch.data(), out.data(), s); },
      sums);
  bench.check("single_pass_reduce", course::compare_exact(want, out.download(), {{}, "sum"}));
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned int counter = 0;
  CUDA_CHECK(cudaMemcpy(&counter, single_pass_counter(scratch.data()), sizeof counter,
                        cudaMemcpyDeviceToHost));
  bench.require("counter_reset", counter == 0,
                "the counter must read 0 after the last call: the last block resets it");
}
