// The latency of a short kernel submitted while a long one fills the GPU: submit_urgent on the
// student's urgent stream with the course's background kernel on the student's background
// stream ("prioritised"), against the course's urgent_baseline, the same short work, with the
// same background on two course streams of default priority ("default_priority").
//
// Each repeat: new urgent inputs, the output poisoned, the device idle; the background kernel
// (every SM full of blocks, each block some tens of us, about 5 ms in all) is launched and the
// host waits until its first block has started; then an event, the urgent work, an event, all
// on the urgent stream. The latency is the time between the events, and the output is checked
// after every repeat. Both are recorded with work = n elements, so the ratio of the rates is
// the ratio of the latencies, default over prioritised. The measurement is invalid when the
// first event passed only late in the background (the urgent stream waited for it, so the
// events do not time the urgent work), or when submit_urgent, called once more with its
// stream held shut, wrote its output anyway (its work ran outside the timed stream).
//
// What to expect: at equal priority the block scheduler hands out the background's remaining
// blocks first, so the urgent kernel waits for nearly all of the 5 ms. At the greatest
// priority it takes the first SM room that frees, at most one background block's time (tens
// of us) after it arrives, plus its own few us: a ratio in the tens to a hundred or more.
// Equal priorities (the default, or both streams at the same end of the range) give about 1.
// Thresholds (stream_priorities.toml): full marks at the low end of the tens to hundreds
// expected, none just above the 1 of equal priorities. The two cases are so far apart that the
// exact values matter little; a low full mark leaves room for a GPU whose scheduler lets a
// kernel of equal priority in earlier, which shortens the default latency and so the ratio.
#include "stream_priorities.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"
#include "course/stream_gate.h"
#include "course/testing_common.h"
#include "stream_priorities_baseline.h"

namespace {

constexpr std::size_t kUrgentElements = 2048;
constexpr int kRepeats = 30;
constexpr int kBackgroundSteps = 2048;  // per thread: tens of us per block at full occupancy
constexpr double kBackgroundMs = 5.0;   // the whole background kernel, roughly

std::vector<float> reference(const std::vector<float>& in) {
  return course::testing::host_map(in, urgent_response);
}

// A page-locked flag the background kernel raises as it starts.
class StartFlag {
 public:
  StartFlag() : host_(1, cudaHostAllocMapped) {
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_.data(), 0));
  }
  void lower() { *reinterpret_cast<volatile int*>(host_.data()) = 0; }
  int* device() const noexcept { return device_; }
  // Spins until the kernel raised the flag; false after timeout_s.
  bool wait_raised(double timeout_s = 2.0) const {
    const auto began = std::chrono::steady_clock::now();
    while (*reinterpret_cast<const volatile int*>(host_.data()) == 0)
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() >
          timeout_s)
        return false;
    return true;
  }

 private:
  course::PinnedBuffer<int> host_;
  int* device_ = nullptr;
};

using UrgentWork = std::function<void(const float*, float*, std::size_t, cudaStream_t)>;

struct Latencies {
  std::vector<double> samples_ms;
  std::optional<course::Comparison> wrong;  // the first repeat whose output was wrong
  std::string problem;                      // why the repeats stopped early, if they did
};

// kRepeats times: the background on `background`, then `work` between two events on `urgent`.
Latencies time_urgent(cudaStream_t urgent, cudaStream_t background, int background_blocks,
                      const UrgentWork& work, const std::string& salt) {
  Latencies result;
  auto rng = course::make_rng("stream_priorities_bench " + salt);
  course::DeviceBuffer<float> in(kUrgentElements), out(kUrgentElements), sink(1);
  StartFlag started;
  course::Event background_began, background_ended, before, after;
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    const auto in_host = course::random_floats(kUrgentElements, -1.f, 1.f, rng);
    in.upload(in_host);
    out.fill_bytes(course::kPoisonByte);
    started.lower();
    CUDA_CHECK(cudaDeviceSynchronize());
    background_began.record(background);
    launch_background(background_blocks, kBackgroundSteps, started.device(), sink.data(),
                      background);
    background_ended.record(background);
    if (!started.wait_raised()) {
      CUDA_CHECK(cudaDeviceSynchronize());
      result.problem =
          "the background kernel did not start within 2 s of its launch on the background stream";
      return result;
    }
    before.record(urgent);
    work(in.data(), out.data(), kUrgentElements, urgent);
    after.record(urgent);
    CUDA_CHECK(cudaDeviceSynchronize());
    const float ms = course::testing::elapsed_ms(before, after);
    const float submitted_ms = course::testing::elapsed_ms(background_began, before);
    const float background_ms = course::testing::elapsed_ms(background_began, background_ended);
    // The first event should pass as soon as it is enqueued, while the background still has
    // most of its blocks to run. If it passed only near the background's end, the urgent
    // stream waited for the background stream (an event, or a hardware queue they share),
    // and the time between the events is not the urgent work's latency.
    if (submitted_ms > 0.5f * background_ms) {
      result.problem = "the urgent stream reached the urgent work only " +
                       std::to_string(submitted_ms) + " ms after the background kernel began (" +
                       std::to_string(background_ms) +
                       " ms in all): it waited for the background stream";
      return result;
    }
    result.samples_ms.push_back(ms);
    auto comparison = course::compare_exact(
        reference(in_host), out.download(),
        {{}, "out of the urgent work in repeat " + std::to_string(repeat)});
    if (!comparison.ok && !result.wrong) result.wrong = std::move(comparison);
  }
  return result;
}

course::Measurement& record(course::Benchmark& bench, const std::string& name,
                            Latencies latencies) {
  course::Measurement& m = bench.record(name, static_cast<double>(kUrgentElements),
                                        course::Unit::Gelems, std::move(latencies.samples_ms));
  if (!latencies.problem.empty() && m.valid) {
    m.valid = false;
    m.problem = latencies.problem;
  }
  if (latencies.wrong) bench.check(name, *latencies.wrong);
  return m;
}

// The latency is timed on the urgent stream, so submit_urgent's work must be there: one more
// call with that stream held shut must leave the output as it was. Returns the problem or "".
std::string off_stream_problem(cudaStream_t urgent) {
  auto rng = course::make_rng("stream_priorities_bench held");
  course::DeviceBuffer<float> in(course::random_floats(kUrgentElements, -1.f, 1.f, rng));
  course::DeviceBuffer<float> out(kUrgentElements);
  out.fill_bytes(course::kPoisonByte);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<unsigned char> poisoned(out.bytes(), course::kPoisonByte);
  const course::HeldCall held = course::call_held(
      urgent, [&](cudaStream_t s) { submit_urgent(in.data(), out.data(), kUrgentElements, s); },
      [&] { return course::snapshot(out.data(), out.bytes()) != poisoned; });
  CUDA_CHECK(cudaDeviceSynchronize());
  if (held.gave_up) return "submit_urgent waited for the device instead of only enqueueing work";
  if (held.changed)
    return "submit_urgent's output was written while its stream was held: the work ran outside "
           "the urgent stream it was given, where the events do not time it";
  return "";
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  // The background's size: whole waves of full occupancy, as many as take about
  // kBackgroundMs, timed on a course stream.
  const int wave = background_wave_blocks();
  int waves = 20;
  {
    course::Stream stream;
    course::DeviceBuffer<float> sink(1);
    StartFlag started;
    course::GpuTimer timer(stream);
    launch_background(wave * waves, kBackgroundSteps, started.device(), sink.data(), stream);
    timer.start();
    launch_background(wave * waves, kBackgroundSteps, started.device(), sink.data(), stream);
    timer.stop();
    const double wave_ms = std::max(static_cast<double>(timer.elapsed_ms()) / waves, 1e-3);
    waves = std::clamp(static_cast<int>(std::lround(kBackgroundMs / wave_ms)), 20, 5000);
    timer.start();
    launch_background(wave * waves, kBackgroundSteps, started.device(), sink.data(), stream);
    timer.stop();
    // Not graded: what the urgent work waits for when nothing lets it in earlier.
    bench.record("background", static_cast<double>(wave) * waves * kBackgroundThreads,
                 course::Unit::Gelems, {static_cast<double>(timer.elapsed_ms())});
  }
  const int background_blocks = wave * waves;

  // Without priorities first, before any of the student's code has run.
  {
    course::Stream urgent, background;
    record(bench, "default_priority",
           time_urgent(urgent, background, background_blocks, urgent_baseline, "default"));
  }

  cudaStream_t urgent = nullptr, background = nullptr;
  create_priority_streams(&urgent, &background);
  struct Destroy {
    cudaStream_t urgent, background;
    ~Destroy() {
      // A destructor must not throw; a failure this late spoils nothing that is measured.
      try {
        if (urgent != nullptr && background != nullptr)
          destroy_priority_streams(urgent, background);
      } catch (const std::exception&) {
      }
    }
  } destroy{urgent, background};
  if (urgent == nullptr || background == nullptr || urgent == background) {
    bench.fail("create_priority_streams must make two distinct streams of its own");
    return;
  }
  course::Measurement& prioritised =
      record(bench, "prioritised",
             time_urgent(urgent, background, background_blocks, submit_urgent, "prioritised"));
  const std::string problem = off_stream_problem(urgent);
  if (!problem.empty() && prioritised.valid) {
    prioritised.valid = false;
    prioritised.problem = problem;
  }
}
