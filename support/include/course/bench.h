// Benchmark harness shared by every exercise's *_bench binary.
//
// Each measurement is warmed up, then repeated with the L2 cache flushed before every repeat
// (a memset over a buffer twice the L2's size) and persisting-L2 state reset before each
// measurement, until the median's 95% confidence interval is within 1% of it (or the most
// repeats allowed, or the time budget, is reached); the median and its interval are reported.
// Given the buffers the work writes (TimedIo), every call is checked, not only the last: see
// Benchmark::time.
// The grader scores ratios of rates measured in the same run, never absolute times. A ceiling
// that several exercises measure alike (Benchmark::shared: the copy at a size, CUB or cuBLAS
// on a ladder's input) is measured once per run by a course-only program (ceilings_main.cpp),
// which no student code shares; each benchmark then only records its key. Results go to the
// JSON file named by --json; the file ends with "completed": true, which the grader requires.
// With --profile (the grader's profile stage, under Nsight Compute) nothing is timed: each
// measurement runs its work once inside an NVTX range named after it, for ncu to select.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "course/buffers.h"
#include "course/compare.h"

namespace course {

enum class Unit { GBps, TFLOPs, Gelems };

struct Measurement {
  std::string name;
  Unit unit = Unit::GBps;
  double work_per_run = 0.0;  // bytes for GB/s, flops for TFLOP/s, elements for Gelem/s
  std::vector<double> samples_ms;
  double median_ms = 0.0;
  double min_ms = 0.0;
  double max_ms = 0.0;
  double rate = 0.0;          // work_per_run / median time, in `unit`
  // The 95% confidence interval of the median time (median_interval), and why the repeats
  // stopped: "precision" (the interval is within the target), "repeats" (the most allowed),
  // "budget" (time ran out), "fixed" (--repeats N). Empty for what was not timed here.
  double ci_low_ms = 0.0;
  double ci_high_ms = 0.0;
  std::string stopped;
  double wall_s = 0.0;        // the whole measurement: warm-ups, repeats, checks
  // When it began, in seconds since the program's Benchmark was made: the gaps between
  // measurements are the program's own inputs, references and comparisons.
  double started_s = 0.0;
  bool valid = true;
  std::string problem;        // why it is not valid
  // The fastest of a few calls timed by the host clock, from a synchronised device to a
  // synchronised device: far above median_ms when the work ran on the host or off the stream.
  double host_ms = 0.0;
  // A shared ceiling's key: what is measured on which shape ("copy:402653184").
  std::string key;
  // Recorded, not timed: the grader measures `key` in a course-only program (--ceilings-elsewhere).
  bool elsewhere = false;
  // Invalid only for what timing suggests (the host-time check, a held stream's gate that gave
  // up): a neighbour on the GPU can cause that too, so the grader measures again before it
  // says so. Invalid by what the outputs show (written off the stream, cached) is never this.
  bool timing_only = false;
};

// One thing found wrong with a measurement, and whether only its timing showed it.
struct Problem {
  std::string text;  // empty: nothing found
  bool from_timing = false;
};

// A buffer every timed call writes, in device or managed memory (not host memory).
struct TimedOutput {
  enum class Compare {
    Exact,   // every byte equals the first call's
    Float,   // every float is within `tolerance` of the first call's: for outputs whose
             // rounding legitimately changes between calls (float atomics)
    Double,  // the same for doubles
  };
  void* data = nullptr;
  std::size_t bytes = 0;
  Compare compare = Compare::Exact;
  Tolerance tolerance{};
  std::string name = "output";  // in messages
};

// `bytes` bytes at `data`, compared byte for byte.
inline TimedOutput exact_output(void* data, std::size_t bytes, std::string name) {
  return {data, bytes, TimedOutput::Compare::Exact, {}, std::move(name)};
}

// The whole of a DeviceBuffer or ManagedBuffer, compared byte for byte.
template <class Buffer>
TimedOutput exact_output(Buffer& buffer, std::string name) {
  return exact_output(buffer.data(), buffer.bytes(), std::move(name));
}

// The whole of a float or double buffer, compared within `tolerance`.
template <class Buffer>
TimedOutput close_output(Buffer& buffer, Tolerance tolerance, std::string name) {
  using Value = std::remove_pointer_t<decltype(buffer.data())>;
  static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double>,
                "close_output compares floats or doubles; use exact_output for other types");
  return {buffer.data(), buffer.bytes(),
          std::is_same_v<Value, float> ? TimedOutput::Compare::Float
                                       : TimedOutput::Compare::Double,
          tolerance, std::move(name)};
}

// What a timed run writes and how its inputs may change between calls.
struct TimedIo {
  TimedIo() = default;
  explicit TimedIo(std::vector<TimedOutput> written,
                   std::function<void(cudaStream_t, int call)> input_versions = {},
                   bool returns_when_done = false)
      : outputs(std::move(written)), vary(std::move(input_versions)),
        waits_for_stream(returns_when_done) {}

  std::vector<TimedOutput> outputs;
  // Optional: called (untimed) before every call, warm-ups included, with the call's number,
  // after the outputs are poisoned; changes the inputs in place (same pointers, same sizes) so
  // that calls alternate between two versions, call % 2. Defeats a result cached by pointer or
  // by size. Version 0 must be the original inputs: the calls after the timed loop are all
  // version 0, so the outputs end holding the original inputs' result. Work that updates its
  // buffer in place can use it to restore that buffer before every call.
  std::function<void(cudaStream_t, int call)> vary;
  // The launcher returns only once its work has finished, by its contract (a texture it must
  // destroy, a pageable copy, a reset that is not stream-ordered): the off-stream check, which
  // holds the stream shut while the launcher runs, cannot apply. The others still do.
  bool waits_for_stream = false;
};

// A TimedIo::vary that alternates element `index` of a device array between its present value
// (version 0) and change(present value) (version 1), with a copy of one element on the stream.
// Call it once the array holds its inputs; it waits for the device to read the present value.
template <class T, class Change>
std::function<void(cudaStream_t, int)> alternate_element(T* device_array, std::size_t index,
                                                         Change change) {
  // Pinned, so the one-element copies are truly asynchronous; shared, so the function copies.
  auto versions = std::make_shared<PinnedBuffer<T>>(2);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(versions->data(), device_array + index, sizeof(T),
                        cudaMemcpyDeviceToHost));
  versions->data()[1] = change(versions->data()[0]);
  T* const target = device_array + index;
  return [versions, target](cudaStream_t stream, int call) {
    CUDA_CHECK(cudaMemcpyAsync(target, versions->data() + call % 2, sizeof(T),
                               cudaMemcpyHostToDevice, stream));
  };
}

struct BenchOptions {
  std::string json_path;      // --json PATH
  // Repeats stop once the median's 95% interval lies within target_precision of it (at
  // least min_repeats: 6 is the fewest whose extremes make a 95% interval), or at
  // max_repeats, or once the budget is spent. --repeats N fixes the count at N.
  int min_repeats = 6;
  int max_repeats = 100;
  double target_precision = 0.01;  // --precision FRACTION
  double budget_s = 2.0;      // per measurement, --budget SECONDS
  // --ceilings-elsewhere (the grader's benchmarks): shared() records keys, times nothing.
  bool ceilings_elsewhere = false;
  // --only KEY,KEY (a ceilings program): shared() times these keys and skips the others.
  std::vector<std::string> only_keys;
  // --profile: every measurement runs its work once, untimed and unchecked, inside an NVTX
  // push/pop range named after the measurement, so that a profiler can select its kernels.
  bool profile = false;
};

class Benchmark {
 public:
  // Parses --json, --repeats, --precision, --budget, --ceilings-elsewhere, --only, --profile;
  // exits 77 when there is no GPU, 2 on bad arguments.
  Benchmark(int argc, char** argv, std::string title);
  Benchmark(const Benchmark&) = delete;
  Benchmark& operator=(const Benchmark&) = delete;

  const cudaDeviceProp& device() const noexcept { return prop_; }
  cudaStream_t stream() const noexcept { return stream_->get(); }

  // Times `run`, which must enqueue exactly one run of the work on the stream it is given.
  // A CUDA error inside marks the measurement invalid instead of ending the program.
  // With --profile it runs `run` once in its NVTX range instead (profile_once).
  // budget_s > 0 overrides the per-measurement time budget (for long sweeps). The reference
  // stays valid across later calls. After the timed loop a few calls are also timed by the
  // host clock: a call that takes far longer than its stream time is invalid.
  Measurement& time(const std::string& name, double work_per_run, Unit unit,
                    const std::function<void(cudaStream_t)>& run, double budget_s = 0.0);

  // The same, and every call is checked, not only the last one:
  //  * before each call (untimed, before the L2 flush) every output is poisoned, then
  //    io.vary, if given, sets the call's input version;
  //  * the first call of each version (calls 0 and 1 with vary, call 0 without) is kept on
  //    the device as that version's golden copy, and every later call, warm-ups included, is
  //    compared with it on the device: a call whose output differs (the work was skipped or
  //    a stale result was copied) makes the measurement invalid, naming the call; with vary,
  //    two identical golden copies do too (the output did not follow the input);
  //  * after the host-timed calls, one more call with the stream held shut
  //    (course::StreamGate): an output that changes before the stream runs was written
  //    outside it, watched for about twice the fastest host-timed call (2-20 ms); a launcher
  //    that blocks until the gate gives up waited for the device (skipped with
  //    io.waits_for_stream);
  //  * every call after the timed loop is version 0, so the outputs end holding the original
  //    inputs' result, which the caller's check() compares.
  Measurement& time(const std::string& name, double work_per_run, Unit unit,
                    const std::function<void(cudaStream_t)>& run, const TimedIo& io,
                    double budget_s = 0.0);

  // A measurement the exercise's benchmark timed itself, with events on streams the harness
  // does not own (a latency on one stream while another is busy). None of time()'s per-call
  // checks apply, so use it only where the timed work is the course's own and the student's
  // code only sets it up (stream priorities). An empty sample is recorded as invalid. With
  // --profile the samples are dropped: the work ran outside any range, and nothing is timed.
  Measurement& record(const std::string& name, double work_per_run, Unit unit,
                      std::vector<double> samples_ms);

  // A ceiling measured alike by several exercises, `key` naming the work and its shape
  // ("cub_reduce_sum:268435456"). Run by hand, it is timed here, like time(). Run by the
  // grader (--ceilings-elsewhere), it is recorded with its key and not timed: `run` is called
  // once, untimed, so the outputs hold its result for check(), and the grader takes the rate
  // from a course-only program (--only KEY) that measured the key once for the whole run, so
  // neither another exercise's repeat nor the student's code in this process can change it.
  // With --profile, `run` runs once in the measurement's NVTX range, with or without
  // --ceilings-elsewhere.
  Measurement& shared(const std::string& key, const std::string& name, double work_per_run,
                      Unit unit, const std::function<void(cudaStream_t)>& run,
                      const TimedIo& io, double budget_s = 0.0);
  // Whether shared() calls `run` in this process (by hand, or --profile); false under the
  // grader, where an io without outputs keeps `run` from being called at all (a library it
  // needs is then never loaded here).
  bool times_shared_here() const { return !options_.ceilings_elsewhere || options_.profile; }

  // The in-run ceiling, shared (key "copy:<bytes>"): a grid-stride float4 copy of `bytes`
  // bytes; rate counts bytes read plus bytes written, the same convention every exercise uses
  // for effective bandwidth.
  Measurement& copy_ceiling(std::size_t bytes, const std::string& name = "copy");

  // Marks a measurement invalid when the output of its timed runs is wrong (ignored with
  // --profile, where nothing is checked).
  void check(const std::string& name, const Comparison& comparison);
  // check() of an output still on the device against an expected copy there: compared byte
  // for byte on the device, and only when they differ copied to the host, where compare_exact
  // says where. A sweep of dozens of measurements over outputs of hundreds of MiB otherwise
  // spends more time copying and comparing on the host than timing.
  template <class T>
  void check_on_device(const std::string& name, const DeviceBuffer<T>& expected,
                       const DeviceBuffer<T>& actual, const CompareOptions& compare = {}) {
    if (options_.profile) return;
    if (expected.size() == actual.size() &&
        differing_bytes(expected.data(), actual.data(), expected.bytes()) == 0) {
      check(name, Comparison{true, expected.size()});
      return;
    }
    check(name, compare_exact(expected.download(), actual.download(), compare));
  }
  // A named pass/fail fact the grader can require (e.g. "persisting L2 was reset"); ignored
  // with --profile.
  void require(const std::string& name, bool ok, const std::string& message);
  // Records an error that makes the whole benchmark fail (an exception from the exercise).
  void fail(const std::string& message) { errors_.push_back(message); }

  Measurement* find(const std::string& name);

  // Prints the table, writes the JSON; returns the process exit code (1 if anything failed).
  int finish();

  // The options in force (repeats, budget), for code that times something by hand.
  const BenchOptions& options() const noexcept { return options_; }

 private:
  class CallChecker;  // the golden copies and the per-call comparison (bench.cu)

  // A new measurement of `name`, nothing timed yet (measurements_ keeps references valid).
  Measurement& add_measurement(const std::string& name, double work_per_run, Unit unit);

  Measurement& time_checked(const std::string& name, double work_per_run, Unit unit,
                            const std::function<void(cudaStream_t)>& run, const TimedIo* io,
                            double budget_s);
  // --profile: `run` once, in an NVTX range named `m.name`, synchronised; nothing timed.
  void profile_once(Measurement& m, const std::function<void(cudaStream_t)>& run,
                    const TimedIo* io);
  // Calls that load the code and warm the caches; their outputs become the golden copies.
  void warm_up(const std::function<void(cudaStream_t)>& run, CallChecker* checker);
  // The timed loop: repeats until the median is known to the target precision, the most
  // repeats allowed are taken or the budget is spent; sets m.stopped.
  void timed_loop(Measurement& m, double budget, const std::function<void(cudaStream_t)>& run,
                  CallChecker* checker);
  // Call `call` with the stream held shut: did the output change within `window_ms`, did the
  // call block? Returns the problem, empty when there is none.
  Problem off_stream_problem(const std::function<void(cudaStream_t)>& run,
                             CallChecker& checker, int call, double window_ms);
  // Calls `call`, call + 2, ... timed by the host clock against their stream time, since the
  // stream's events miss work done elsewhere; sets m.host_ms. Returns the problem or "".
  Problem host_time_problem(Measurement& m, const std::function<void(cudaStream_t)>& run,
                            CallChecker* checker, int call);
  void reset_cache_state();
  void flush_l2();
  // Bytes where a and b (device memory, `bytes` long each) differ, counted on the device.
  unsigned long long differing_bytes(const void* a, const void* b, std::size_t bytes);

  std::string title_;
  std::chrono::steady_clock::time_point created_;
  double init_s_ = 0.0;  // the constructor: CUDA's start, the flush buffer, the first sync
  BenchOptions options_;
  cudaDeviceProp prop_{};
  std::optional<Stream> stream_;  // created once a GPU is known to be there
  DeviceBuffer<unsigned char> flush_buffer_;  // twice the L2: a memset over it evicts the L2
  std::deque<Measurement> measurements_;  // deque: references survive push_back
  struct Requirement {
    std::string name;
    bool ok;
    std::string message;
  };
  std::vector<Requirement> requirements_;
  std::vector<std::string> errors_;
  // --profile: the measurements run in NVTX ranges, in order (the JSON's "profile_ranges").
  std::vector<std::string> profile_ranges_;
  // Shared ceilings a ceilings program was not asked for: neither timed nor reported.
  std::deque<Measurement> skipped_;
  std::vector<std::string> keys_seen_;  // every key shared() met, for finish()
};

// Median of a sample; the mean of the two middle values for an even count.
double median(std::vector<double> values);

// A distribution-free confidence interval of a sample's median: the r-th smallest and r-th
// largest values, r the largest rank whose interval covers the median with at least
// `confidence` (two binomial tails of probability 1/2 each at most (1 - confidence) / 2).
// Makes no assumption about the distribution, which for GPU timings is skewed. `known` is
// false when the sample is too small for any rank (fewer than 6 values at 95%).
struct MedianInterval {
  double low = 0.0;
  double high = 0.0;
  bool known = false;
};
MedianInterval median_interval(std::vector<double> values, double confidence = 0.95);
// How far the interval reaches from the median, as a fraction of it: max(median - low,
// high - median) / median; infinity when the interval is not known.
double median_precision(const std::vector<double>& values);
const char* unit_name(Unit unit);
double rate_of(double work_per_run, double ms, Unit unit);

// Each exercise's *_bench.cpp defines this; support/src/bench_main.cpp calls it.
void run_benchmark(Benchmark& bench);

// main() of a benchmark or ceilings program: runs `body` in a Benchmark made from the
// arguments (no GPU: exit 77), turns an exception into a failed benchmark, writes the results.
int benchmark_main(int argc, char** argv, void (*body)(Benchmark&));

// A ceilings program's measurements (support/src/ceilings_main.cpp calls it with --only set):
// the copy's in support/src/copy_ceilings.cpp, a shared folder's in <shared>_ceilings.cpp.
void run_ceilings(Benchmark& bench);

}  // namespace course
