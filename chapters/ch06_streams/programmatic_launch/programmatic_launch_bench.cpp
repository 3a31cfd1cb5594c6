// A chain of 256 short dependent kernels, each with a prologue that needs nothing from the
// step before, issued as plain launches of the course's own step kernel and as the student's
// programmatic launches, in the same run. Both rates count the same work (n * steps element
// updates), so their ratio is the programmatic chain's speedup over the plain one.
//
// Why these sizes: each step is one block per SM (step_blocks) of kStepThreads threads with
// four elements each. A step's prologue (kDeriveRounds rounds of a dependent multiply and
// fused multiply-add per coefficient) and its update (four elements through kStepCoefficients
// such rounds each, behind a global load) are both latency chains of a few microseconds, so a
// step costs the GPU about 12 to 15 us launched plainly: the launch, then the prologue, then the
// update, one after another. Launched programmatically, a step starts as soon as the step
// before has passed its wait and triggered, derives its coefficients while that step updates,
// and only its update is left once the step before has ended: about half the time. Each
// step's blocks take a quarter of an SM's threads, so the next step's blocks fit beside them.
// Both sides stay above the host's cost of a launch (a few microseconds), so the GPU, not the
// host, sets the pace. 256 steps make a call a few milliseconds, long enough to time steadily.
//
// "one_plain_step" (not graded) times a single plain launch, for calibration: a chain's time
// per step against one step alone shows what launching costs between steps.
//
// Thresholds (the manifest's): the kernels are the same on both sides, so plain launches
// score about 1.0. Per plain step: the launch gap, a prologue and an update; per programmatic
// step about the update plus the wait's hand-over. Measured on two H100s (six grades): 14.0 us
// per plain step, 8.0 us per programmatic step, a ratio of 1.73 to 1.76. A chain that launches programmatically but never triggers
// (or triggers after its last store) lets the next step start only as the blocks exit: it
// hides the launch but not the prologue, and scores well below that.
//
// Each step updates data in place, so before every call Benchmark::time restores it
// (TimedIo::vary): version 0 the original inputs, version 1 other random inputs, so every
// call's output is known and a remembered one is caught. The course's chain's last output is
// checked against the CPU reference at sampled elements (the whole array through 256 steps
// would take the CPU seconds) and kept on the device as the answer the student's chain must
// match byte for byte.
#include "programmatic_launch.h"

#include <cstddef>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device.h"
#include "course/random.h"
#include "programmatic_launch_baseline.h"
#include "programmatic_launch_reference.h"

namespace {

constexpr int kSteps = 256;
constexpr int kElementsPerThread = 4;
constexpr std::size_t kSamples = 64;

// kSamples indices spread over [0, n), the first and the last among them.
std::vector<std::size_t> sampled_indices(std::size_t n) {
  std::vector<std::size_t> indices;
  for (std::size_t s = 0; s < kSamples; ++s) indices.push_back(s * (n - 1) / (kSamples - 1));
  return indices;
}

std::vector<float> gather(const std::vector<float>& all, const std::vector<std::size_t>& at) {
  std::vector<float> out;
  for (std::size_t i : at) out.push_back(all[i]);
  return out;
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const std::size_t n =
      static_cast<std::size_t>(kElementsPerThread) * kStepThreads * course::sm_count();
  const double updates = static_cast<double>(n) * kSteps;
  auto rng = course::make_rng("programmatic_launch_bench");
  const auto original = course::random_floats(n, -1.f, 1.f, rng);
  const auto other = course::random_floats(n, -1.f, 1.f, rng);
  course::DeviceBuffer<float> data(n), expected(n), original_device(original),
      other_device(other);

  const course::TimedIo restores_data{
      {course::exact_output(data, "data")}, [&](cudaStream_t s, int call) {
        const float* version = call % 2 == 0 ? original_device.data() : other_device.data();
        CUDA_CHECK(cudaMemcpyAsync(data.data(), version, n * sizeof(float),
                                   cudaMemcpyDeviceToDevice, s));
      }};

  bench.time(
      "one_plain_step", static_cast<double>(n), course::Unit::Gelems,
      [&](cudaStream_t s) { step_chain_plain_launches(data.data(), n, 1, s); }, restores_data);
  bench.check("one_plain_step",
              course::compare_exact(step_chain_reference(original, 1), data.download(),
                                    {{}, "data after one plain step"}));

  bench.time(
      "plain_launches", updates, course::Unit::Gelems,
      [&](cudaStream_t s) { step_chain_plain_launches(data.data(), n, kSteps, s); },
      restores_data);
  const auto at = sampled_indices(n);
  bench.check("plain_launches",
              course::compare_exact(step_chain_reference(gather(original, at), kSteps),
                                    gather(data.download(), at),
                                    {{}, "sampled elements of data after the plain launches"}));
  CUDA_CHECK(cudaMemcpy(expected.data(), data.data(), n * sizeof(float),
                        cudaMemcpyDeviceToDevice));

  bench.time(
      "programmatic_launches", updates, course::Unit::Gelems,
      [&](cudaStream_t s) { run_step_chain(data.data(), n, kSteps, s); }, restores_data);
  bench.check_on_device("programmatic_launches", expected, data,
                        {{}, "data after the programmatic launches (expected: the plain "
                             "launches' result)"});
}
