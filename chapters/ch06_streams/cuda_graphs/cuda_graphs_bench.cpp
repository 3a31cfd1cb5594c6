// A chain of 256 tiny dependent kernels on 4096 floats, issued as 256 plain launches of the
// course's own step kernel and as one replay of the student's graph, in the same run. Both
// rates count the same work (n * steps element updates), so their ratio is the replay's
// speedup over the plain launches.
//
// Why these sizes: 4096 floats are 16 blocks of 256 threads, one element each, so a step's
// kernel runs for about as long as the GPU takes to start any kernel (a couple of
// microseconds), and 256 steps make the chain long enough (hundreds of microseconds) that the
// replay's single cudaGraphLaunch is amortised and the timing is stable. Plain launches pay
// the host's cost of each launch (a few microseconds of driver work, usually more than the
// kernel) and the GPU's work of fetching and starting every kernel on its own; the graph's
// launch work is prepared once at instantiation, and the GPU starts each node as soon as the
// previous one ends.
//
// Thresholds (the manifest's): the kernels are the same on both sides, so a "replay" that is
// plain launches scores about 1.0, and zero_at = 1.2 keeps noise above that from earning
// points. A plain launch costs the host a few microseconds, more than such a kernel runs, so
// the plain chain goes at the host's pace, while a straight chain of kernel nodes starts each
// node about a microsecond after the previous one ends. Measured on an H100 (four runs,
// 2026-11-23): 4.1 us per plain launch against 1.0 us per node, replays 3.5x to 4.2x faster;
// full_at = 2.5 leaves room for a slower host below that.
//
// Each step updates data in place, so before every call Benchmark::time restores it
// (TimedIo::vary): version 0 the original inputs, version 1 other random inputs, so every
// call's output is known and a remembered one is caught. The calls after the timed loop are
// version 0: each side ends holding one pass of the chain over the original inputs, compared
// exactly with the host reference.
#include "cuda_graphs.h"

#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"
#include "cuda_graphs_baseline.h"
#include "cuda_graphs_reference.h"

void course::run_benchmark(course::Benchmark& bench) {
  const std::size_t n = 4096;
  const int steps = 256;
  const double updates = static_cast<double>(n) * steps;
  auto rng = course::make_rng("cuda_graphs_bench");
  const auto original = course::random_floats(n, -1.f, 1.f, rng);
  const auto other = course::random_floats(n, -1.f, 1.f, rng);
  const auto expected = step_chain_reference(original, steps);
  course::DeviceBuffer<float> data(n), original_device(original), other_device(other);

  const course::TimedIo restores_data{
      {course::exact_output(data, "data")}, [&](cudaStream_t s, int call) {
        const float* version = call % 2 == 0 ? original_device.data() : other_device.data();
        CUDA_CHECK(cudaMemcpyAsync(data.data(), version, n * sizeof(float),
                                   cudaMemcpyDeviceToDevice, s));
      }};

  bench.time(
      "plain_launches", updates, course::Unit::Gelems,
      [&](cudaStream_t s) { step_chain_plain_launches(data.data(), n, steps, s); },
      restores_data);
  bench.check("plain_launches", course::compare_exact(expected, data.download(),
                                                      {{}, "data after the plain launches"}));

  // Built and uploaded once, untimed: a graph pays for instantiation once and is replayed
  // many times.
  StepGraph graph = build_step_graph(data.data(), n, steps, bench.stream());
  CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  bench.time(
      "graph_replay", updates, course::Unit::Gelems,
      [&](cudaStream_t s) { launch_step_graph(graph, s); }, restores_data);
  bench.check("graph_replay", course::compare_exact(expected, data.download(),
                                                    {{}, "data after the graph replay"}));
  CUDA_CHECK(cudaDeviceSynchronize());
  destroy_step_graph(graph);
}
