// run_tasks on a pool of 8 streams against the course's serial_tasks, the same 32 tasks one
// after another on one stream, in the same run.
//
// Each task is one block of 128 threads, one element per thread, each element a chain of 2^17
// dependent FMAs: about 2^17 * 4 cycles, some 300 us on an H100, long enough that launching
// (a few us per kernel, overlapped with the device's work) does not decide the time, and a
// task's time is set by the FMA latency alone, so no arrangement of its threads makes one task
// faster. One task uses one SM; serially the 32 take 32 task-times. Dealt round-robin over 8
// streams that run side by side they take 4 task-times: the ideal ratio is 8. The default 8
// hardware queues (CUDA_DEVICE_MAX_CONNECTIONS) are enough for 8 streams, but the benchmark's
// own stream shares one with a pool stream, and each stream's first task starts a few us
// after the one before it, so expect somewhat less, 6 to 7.5. The same tasks all on the given
// stream score about 1, a pool of 2 used properly about 2.
// Thresholds (concurrent_kernels.toml): full marks at the bottom of that 6 to 7.5 (most of the
// 8, allowing for queue sharing), none at 1.5 (above what one stream can do with any noise,
// below what two streams side by side reach).
//
// The outputs are poisoned and compared before and after every call (TimedIo), and the calls
// alternate between the inputs and the inputs with one element of every task changed, so a
// task whose output is remembered rather than computed makes the measurement invalid.
#include "concurrent_kernels.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"
#include "course/testing_common.h"
#include "concurrent_kernels_baseline.h"

namespace {

using Pool = course::testing::Owned<StreamPool, destroy_stream_pool>;

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const int pool_size = 8;
  const int tasks = 32;
  const std::size_t n_each = kTaskThreads;
  const int iterations = 1 << 17;
  const double elements = static_cast<double>(tasks) * static_cast<double>(n_each);

  auto rng = course::make_rng("concurrent_kernels_bench");
  std::vector<course::DeviceBuffer<float>> inputs, expected, outputs;
  for (int t = 0; t < tasks; ++t) {
    inputs.emplace_back(n_each);
    expected.emplace_back(n_each);
    outputs.emplace_back(n_each);
    course::fill_hashed(inputs.back().data(), n_each, rng(), bench.stream());
  }
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  std::vector<const float*> input_pointers;
  std::vector<float*> expected_pointers, output_pointers;
  std::vector<course::TimedOutput> expected_io, output_io;
  std::vector<std::function<void(cudaStream_t, int)>> changes;
  for (int t = 0; t < tasks; ++t) {
    input_pointers.push_back(inputs[t].data());
    expected_pointers.push_back(expected[t].data());
    output_pointers.push_back(outputs[t].data());
    expected_io.push_back(course::exact_output(expected[t], "serial output " + std::to_string(t)));
    output_io.push_back(course::exact_output(outputs[t], "outputs[" + std::to_string(t) + "]"));
    // Any element, moved by 0.5 inside [-1, 1]: task_chain adds its start, so the output moves.
    changes.push_back(course::alternate_element(
        inputs[t].data(), rng() % n_each, [](float x) { return x > 0.f ? x - 0.5f : x + 0.5f; }));
  }
  const auto every_task_changed = [changes](cudaStream_t stream, int call) {
    for (const auto& change : changes) change(stream, call);
  };

  bench.time(
      "serial_tasks", elements, course::Unit::Gelems,
      [&](cudaStream_t s) {
        serial_tasks(input_pointers.data(), expected_pointers.data(), n_each, tasks, iterations,
                     s);
      },
      course::TimedIo{expected_io, every_task_changed});

  Pool pool(create_stream_pool(pool_size));
  if (pool == nullptr) {
    bench.fail("create_stream_pool returned nullptr");
    return;
  }
  bench.time(
      "run_tasks", elements, course::Unit::Gelems,
      [&](cudaStream_t s) {
        run_tasks(pool.get(), input_pointers.data(), output_pointers.data(), n_each, tasks,
                  iterations, s);
      },
      course::TimedIo{output_io, every_task_changed});
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int t = 0; t < tasks; ++t)
    bench.check("run_tasks", course::compare_exact(expected[t].download(), outputs[t].download(),
                                                   {{}, "outputs[" + std::to_string(t) + "]"}));
}
