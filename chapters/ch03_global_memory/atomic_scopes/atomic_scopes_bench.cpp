// What each scope costs, all in one run, in values counted per second on 2^24 values (64 MiB,
// read from DRAM: the harness flushes the L2 before every repeat).
//
//   course_device_<input>  the course's histogram, one device-scope atomicAdd per value
//   device_scope_<input>   histogram_device_scope
//   block_scope_<input>    histogram_block_scope
// on a uniform input and on a one-bin input (every value in the same bin, the most contended);
// then count_system_scope on the uniform input, counting one bin into a SharedCounter
// (atomic_scopes_host.h: managed memory wherever the device has concurrent managed access), alone
// (system_scope_uniform) and while a host thread adds to the word next to the counter, on the
// same page (system_scope_uniform_host_busy): the device's system-scope atomics then meet a page
// the host keeps taking back. The host adds next to the counter, not to it, so that every
// call's count can still be checked; the two system-scope measurements are shown, not graded.
//
// The launchers add to their outputs, so every call starts from zeroed bins (or counter),
// untimed, and the calls alternate between the input and the input with one value moved to the
// neighbouring bin: a result remembered from an earlier call is caught.
#include "atomic_scopes.h"

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "atomic_scopes_baseline.h"
#include "atomic_scopes_host.h"
#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"

namespace {

constexpr int kValues = 1 << 24;

using HistogramCall = void (*)(const unsigned*, int, unsigned*, cudaStream_t);

// TimedIo::vary for an output the launchers add to: clears it, then sets the input's version.
std::function<void(cudaStream_t, int)> cleared_then(void* output, std::size_t bytes,
                                                    std::function<void(cudaStream_t, int)> vary) {
  return [output, bytes, vary](cudaStream_t stream, int call) {
    CUDA_CHECK(cudaMemsetAsync(output, 0, bytes, stream));
    vary(stream, call);
  };
}

// Flipping a value's lowest bit moves it to the neighbouring bin.
std::function<void(cudaStream_t, int)> moved_value(course::DeviceBuffer<unsigned>& in,
                                                   std::size_t index) {
  return course::alternate_element(in.data(), index, [](unsigned value) { return value ^ 1u; });
}

void measure_histograms(course::Benchmark& bench, const std::string& input,
                        course::DeviceBuffer<unsigned>& in) {
  const auto expected = scope_histogram_reference(in.download());
  course::DeviceBuffer<unsigned> bins(kScopeBins);
  const course::TimedIo io{{course::exact_output(bins, "bins")},
                           cleared_then(bins.data(), bins.bytes(),
                                        moved_value(in, course::run_seed() % kValues))};
  auto measure = [&](const std::string& name, HistogramCall call) {
    bench.time(name, kValues, course::Unit::Gelems,
               [&](cudaStream_t s) { call(in.data(), kValues, bins.data(), s); }, io);
    bench.check(name, course::compare_exact(expected, bins.download(), {{}, "bins of " + name}));
  };
  measure("course_device_" + input, course_histogram_device_scope);
  measure("device_scope_" + input, histogram_device_scope);
  measure("block_scope_" + input, histogram_block_scope);
}

void measure_system_scope(course::Benchmark& bench, course::DeviceBuffer<unsigned>& in) {
  // The histograms' last calls restored the input on the benchmark's stream.
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<unsigned> values = in.download();
  const std::size_t moved = course::run_seed() % kValues;
  // The bin of the value that moves, so that the two versions' counts differ by one.
  const unsigned bin = scope_bin(values[moved]);
  unsigned long long expected = 0;
  for (const unsigned value : values) expected += scope_bin(value) == bin ? 1 : 0;

  SharedCounter shared;
  std::printf("system-scope counter in %s\n", shared.describe().c_str());
  const course::TimedIo io{
      {course::exact_output(shared.counter(), sizeof(unsigned long long), "counter")},
      cleared_then(shared.counter(), sizeof(unsigned long long), moved_value(in, moved))};
  auto measure = [&](const std::string& name) {
    bench.time(name, kValues, course::Unit::Gelems,
               [&](cudaStream_t s) { count_system_scope(in.data(), kValues, bin,
                                                        shared.counter(), s); },
               io);
    CUDA_CHECK(cudaDeviceSynchronize());
    bench.check(name, course::compare_exact(std::vector<unsigned long long>{expected},
                                            std::vector<unsigned long long>{*shared.counter()},
                                            {{}, "counter of " + name}));
  };
  measure("system_scope_uniform");
  if (!shared.host_may_add_during_kernels()) {
    std::printf("system_scope_uniform_host_busy not measured: %s\n", shared.describe().c_str());
    return;
  }
  HostAdder neighbour(shared.neighbour());
  if (!neighbour.wait_until(4096)) {
    bench.fail("the host thread that shares the counter's page did not get to run");
    return;
  }
  measure("system_scope_uniform_host_busy");
  neighbour.stop();
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const auto seed = course::run_seed();
  course::DeviceBuffer<unsigned> uniform(kValues), one_bin(kValues);
  course::fill_hashed(uniform.data(), kValues, seed, bench.stream());
  fill_one_bin(one_bin.data(), kValues, static_cast<unsigned>(seed % kScopeBins), seed + 1,
               bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  measure_histograms(bench, "uniform", uniform);
  measure_histograms(bench, "one_bin", one_bin);
  measure_system_scope(bench, uniform);
}
