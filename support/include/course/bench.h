// Benchmark harness shared by every exercise's *_bench binary.
//
// Each measurement is warmed up, then repeated with the L2 cache flushed before every repeat
// (a memset over a buffer twice the L2's size) and persisting-L2 state reset before each
// measurement, until the spread is small or the time budget is spent; the median is reported.
// Ceilings (a device-to-device copy kernel) are measured in the same process, so the grader
// scores ratios, never absolute times. Results go to the JSON file named by --json; the file
// ends with "completed": true, which the grader requires.
#pragma once

#include <cuda_runtime.h>

#include <deque>
#include <functional>
#include <optional>
#include <string>
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
  bool valid = true;
  std::string problem;        // why it is not valid
};

struct BenchOptions {
  std::string json_path;      // --json PATH
  int min_repeats = 10;       // --repeats N sets both bounds
  int max_repeats = 100;
  double budget_s = 2.0;      // per measurement, --budget SECONDS
  double target_spread = 0.03;  // stop once (p75 - p25) / median is under this
};

class Benchmark {
 public:
  // Parses --json, --repeats, --budget; exits 77 when there is no GPU, 2 on bad arguments.
  Benchmark(int argc, char** argv, std::string title);
  Benchmark(const Benchmark&) = delete;
  Benchmark& operator=(const Benchmark&) = delete;

  const cudaDeviceProp& device() const noexcept { return prop_; }
  cudaStream_t stream() const noexcept { return stream_->get(); }

  // Times `run`, which must enqueue exactly one run of the work on the stream it is given.
  // A CUDA error inside marks the measurement invalid instead of ending the program.
  // budget_s > 0 overrides the per-measurement time budget (for long sweeps). The reference
  // stays valid across later calls.
  Measurement& time(const std::string& name, double work_per_run, Unit unit,
                    const std::function<void(cudaStream_t)>& run, double budget_s = 0.0);

  // In-run ceiling: a grid-stride float4 copy of `bytes` bytes; rate counts bytes read plus
  // bytes written, the same convention every exercise uses for effective bandwidth.
  Measurement& copy_ceiling(std::size_t bytes, const std::string& name = "copy");

  // Marks a measurement invalid when the output of its timed runs is wrong.
  void check(const std::string& name, const Comparison& comparison);
  // A named pass/fail fact the grader can require (e.g. "persisting L2 was reset").
  void require(const std::string& name, bool ok, const std::string& message);
  // Records an error that makes the whole benchmark fail (an exception from the exercise).
  void fail(const std::string& message) { errors_.push_back(message); }

  Measurement* find(const std::string& name);

  // Prints the table, writes the JSON; returns the process exit code (1 if anything failed).
  int finish();

  // The options in force (repeats, budget), for code that times something by hand.
  const BenchOptions& options() const noexcept { return options_; }

 private:
  void reset_cache_state();
  void flush_l2();

  std::string title_;
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
};

// Median of a sample; the mean of the two middle values for an even count.
double median(std::vector<double> values);
// (p75 - p25) / median: the relative spread used to stop repeating.
double relative_spread(std::vector<double> values);
const char* unit_name(Unit unit);
double rate_of(double work_per_run, double ms, Unit unit);

// Each exercise's *_bench.cpp defines this; support/src/bench_main.cpp calls it.
void run_benchmark(Benchmark& bench);

}  // namespace course
