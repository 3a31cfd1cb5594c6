#include "course/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

// Header-only NVTX3: its calls cost nothing unless a tool (ncu) injects itself.
#include <nvtx3/nvToolsExt.h>

#include "course/check.h"
#include "course/json.h"
#include "course/results.h"
#include "course/stream_gate.h"

namespace course {

namespace {

// The host-time check: a call whose wall time (device synchronised before and after) exceeds
// kHostTimeFactor * median + kHostTimeSlackMs ran work the stream's events did not see. The
// slack covers launch latency and the two synchronisations. To be calibrated on a GPU.
constexpr double kHostTimeFactor = 2.0;
constexpr double kHostTimeSlackMs = 0.5;
constexpr int kHostTimedCalls = 3;

// The held call watches the outputs for kHeldWindowFactor times the fastest host-timed call
// plus kHeldWindowSlackMs, within [kHeldWindowMinMs, kHeldWindowMs]. Work the launcher moves off
// the given stream (kernels, copies or host functions on streams of its own) is work that
// cudaDeviceSynchronize waits for, so the host-timed calls include it, and held it starts at
// once beside the one-thread gate and shows within about that time; threads of the student's
// own, which could write later, are refused by the integrity stage. A short window keeps a
// sweep of dozens of measurements from waiting 20 ms each.
constexpr double kHeldWindowFactor = 2.0;
constexpr double kHeldWindowSlackMs = 1.0;
constexpr double kHeldWindowMinMs = 2.0;

double held_window_ms(double host_ms) {
  return std::clamp(kHeldWindowFactor * host_ms + kHeldWindowSlackMs, kHeldWindowMinMs,
                    kHeldWindowMs);
}

constexpr int kWarmups = 2;  // with vary: one per input version, each version's golden copy
// Calls after the timed loop: the off-stream check and the host-timed calls.
constexpr int kCallsAfterLoop = 1 + kHostTimedCalls;

// The off-stream check watches a large output through samples, not whole: every byte of an
// output up to kWholeSampleBytes; of a larger one its first, middle and last kEdgeSampleBytes
// and kStridedSamples evenly spaced pieces of kStridedSampleBytes, so a 1 GiB output costs
// about 450 KiB of copies per look. Work that ran outside the stream writes all of its
// output, so any of these pieces shows it.
constexpr std::size_t kWholeSampleBytes = std::size_t{1} << 20;
constexpr std::size_t kEdgeSampleBytes = std::size_t{64} << 10;
constexpr std::size_t kStridedSampleBytes = std::size_t{4} << 10;
constexpr int kStridedSamples = 64;

constexpr int kCompareThreads = 256;
constexpr std::size_t kCompareWordBytes = 16;

// Where data lies past its last 16-byte boundary.
std::size_t misalignment_of(const void* data) {
  return reinterpret_cast<std::uintptr_t>(data) % kCompareWordBytes;
}

// The bytes of an output before its first 16-byte boundary (all of a short one).
std::size_t head_of(const void* data, std::size_t bytes) {
  const std::size_t misalignment = misalignment_of(data);
  return std::min(bytes, misalignment == 0 ? std::size_t{0} : kCompareWordBytes - misalignment);
}

__global__ void copy_float4_kernel(const float4* __restrict__ in, float4* __restrict__ out,
                                   std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    out[i] = in[i];
}

// Adds to *differences the number of bytes where actual and expected differ. Both start at the
// same address modulo 16, so the `head` bytes before the first 16-byte boundary and the bytes
// after the last one are compared alone, and the rest 16 bytes at a time.
__global__ void count_byte_differences(const unsigned char* actual,
                                       const unsigned char* expected, std::size_t bytes,
                                       std::size_t head, unsigned long long* differences) {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t words = (bytes - head) / kCompareWordBytes;
  const std::size_t tail = head + words * kCompareWordBytes;
  const auto* actual_words = reinterpret_cast<const uint4*>(actual + head);
  const auto* expected_words = reinterpret_cast<const uint4*>(expected + head);
  unsigned long long count = 0;
  for (std::size_t w = thread; w < words; w += stride) {
    const uint4 a = actual_words[w];
    const uint4 e = expected_words[w];
    // __vcmpne4 sets a byte to 0xff where the two words' bytes differ: 8 bits per byte.
    count += (__popc(__vcmpne4(a.x, e.x)) + __popc(__vcmpne4(a.y, e.y)) +
              __popc(__vcmpne4(a.z, e.z)) + __popc(__vcmpne4(a.w, e.w))) / 8;
  }
  if (thread < head && actual[thread] != expected[thread]) ++count;
  if (tail + thread < bytes && actual[tail + thread] != expected[tail + thread]) ++count;
  if (count > 0) atomicAdd(differences, count);
}

__device__ bool same_bits(float a, float b) { return __float_as_uint(a) == __float_as_uint(b); }
__device__ bool same_bits(double a, double b) {
  return __double_as_longlong(a) == __double_as_longlong(b);
}

// Adds to *differences the number of values of actual outside the tolerance of expected's
// (|a - e| <= abs + rel * |e|). Equal bits always match, so a NaN left where the first call
// left one too (padding never written) is no difference; any other NaN or Inf is one.
template <class T>
__global__ void count_value_differences(const T* actual, const T* expected, std::size_t count,
                                        double rel, double abs,
                                        unsigned long long* differences) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long outside = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    const T a = actual[i];
    const T e = expected[i];
    if (same_bits(a, e)) continue;
    const double difference = fabs(static_cast<double>(a) - static_cast<double>(e));
    if (!isfinite(a) || !isfinite(e) || difference > abs + rel * fabs(static_cast<double>(e)))
      ++outside;
  }
  if (outside > 0) atomicAdd(differences, outside);
}

// An empty kernel launched first in each --profile range: in ncu's list of kernels, which is
// in launch order, each one starts the next range of the bench's "profile_ranges".
__global__ void profile_range_marker() {}

[[noreturn]] void usage(const char* program, const char* problem) {
  std::fprintf(stderr,
               "%s: %s\nusage: %s [--json PATH] [--repeats N] [--precision FRACTION] "
               "[--budget SECONDS] [--ceilings-elsewhere | --only KEY[,KEY...]] [--profile]\n",
               program, problem, program);
  std::exit(2);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double pos = p * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

double median(std::vector<double> values) { return percentile(std::move(values), 0.5); }

MedianInterval median_interval(std::vector<double> values, double confidence) {
  const int n = static_cast<int>(values.size());
  // P(B <= r - 1) for B ~ Binomial(n, 1/2), summed in log space so that a large n does not
  // underflow 2^-n; the largest r whose two tails stay within 1 - confidence.
  const double tail_allowed = (1.0 - confidence) / 2.0;
  double below = 0.0;  // P(B <= r - 1)
  int rank = 0;
  for (int r = 1; 2 * r <= n; ++r) {
    const double log_pmf = std::lgamma(n + 1.0) - std::lgamma(r) - std::lgamma(n - r + 2.0) -
                           n * std::log(2.0);
    below += std::exp(log_pmf);  // P(B = r - 1)
    if (below > tail_allowed) break;
    rank = r;
  }
  if (rank == 0) return {};
  std::sort(values.begin(), values.end());
  return {values[rank - 1], values[n - rank], true};
}

double median_precision(const std::vector<double>& values) {
  const MedianInterval interval = median_interval(values);
  const double mid = median(values);
  if (!interval.known || mid <= 0.0) return std::numeric_limits<double>::infinity();
  return std::max(mid - interval.low, interval.high - mid) / mid;
}

const char* unit_name(Unit unit) {
  switch (unit) {
    case Unit::GBps: return "GB/s";
    case Unit::TFLOPs: return "TFLOP/s";
    case Unit::Gelems: return "Gelem/s";
  }
  return "?";
}

double rate_of(double work_per_run, double ms, Unit unit) {
  if (ms <= 0.0) return 0.0;
  const double per_second = work_per_run / (ms * 1e-3);
  return unit == Unit::TFLOPs ? per_second / 1e12 : per_second / 1e9;
}

Benchmark::Benchmark(int argc, char** argv, std::string title)
    : title_(std::move(title)), created_(std::chrono::steady_clock::now()) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(argv[0], ("missing value after " + arg).c_str());
      return argv[++i];
    };
    if (arg == "--json") {
      options_.json_path = value();
    } else if (arg == "--repeats") {
      const int n = std::atoi(value().c_str());
      if (n < 1) usage(argv[0], "--repeats takes a positive whole number");
      options_.min_repeats = options_.max_repeats = n;
    } else if (arg == "--precision") {
      options_.target_precision = std::atof(value().c_str());
      if (!(options_.target_precision > 0 && options_.target_precision < 1))
        usage(argv[0], "--precision takes a fraction between 0 and 1 (0.01: within 1%)");
    } else if (arg == "--budget") {
      options_.budget_s = std::atof(value().c_str());
      if (options_.budget_s <= 0) usage(argv[0], "--budget takes a positive number of seconds");
    } else if (arg == "--ceilings-elsewhere") {
      options_.ceilings_elsewhere = true;
    } else if (arg == "--profile") {
      options_.profile = true;
    } else if (arg == "--only") {
      const std::string keys = value();
      for (std::size_t start = 0; start <= keys.size();) {
        const std::size_t comma = std::min(keys.find(',', start), keys.size());
        if (comma > start) options_.only_keys.push_back(keys.substr(start, comma - start));
        start = comma + 1;
      }
      if (options_.only_keys.empty()) usage(argv[0], "--only takes a comma-separated key list");
    } else {
      usage(argv[0], ("unknown argument " + arg).c_str());
    }
  }
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device here (%s); benchmarks need a GPU.\n",
                status != cudaSuccess ? cudaGetErrorName(status) : "0 devices");
    std::exit(77);
  }
  CUDA_CHECK(cudaGetDeviceProperties(&prop_, 0));
  stream_.emplace(cudaStreamNonBlocking);
  // Twice the L2 size, so a memset over it evicts whatever the previous repeat left there.
  flush_buffer_ = DeviceBuffer<unsigned char>(
      std::max<std::size_t>(2 * static_cast<std::size_t>(prop_.l2CacheSize), 32u << 20));
  if (options_.ceilings_elsewhere && !options_.only_keys.empty())
    usage(argv[0], "--ceilings-elsewhere and --only exclude each other");
  // Work that a static constructor left on the device (a kernel holding every SM, on a stream
  // of its own) ends here, before anything is timed, rather than slowing a baseline.
  CUDA_CHECK(cudaDeviceSynchronize());
  init_s_ = seconds_since(created_);
}

void Benchmark::reset_cache_state() {
  // Undo whatever earlier work left behind that would favour or penalise the next
  // measurement: persisting L2 lines, a persisting set-aside, an access policy window.
  if (prop_.persistingL2CacheMaxSize > 0) {
    cudaStreamAttrValue attribute{};
    attribute.accessPolicyWindow.num_bytes = 0;
    CUDA_CHECK(
        cudaStreamSetAttribute(stream(), cudaStreamAttributeAccessPolicyWindow, &attribute));
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
  }
  CUDA_CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));
}

void Benchmark::flush_l2() {
  CUDA_CHECK(cudaMemsetAsync(flush_buffer_.data(), 0, flush_buffer_.bytes(), stream()));
}

// Owns what checking every call needs: each output's golden copies (one per input version,
// stored at the output's alignment modulo 16), and one device counter per call and output
// that the comparisons add to, read back once after the last call.
class Benchmark::CallChecker {
 public:
  CallChecker(const TimedIo& io, cudaStream_t stream, int blocks, int max_calls)
      : io_(io), stream_(stream), blocks_(blocks), rows_(max_calls + 1),
        counters_(static_cast<std::size_t>(rows_) * io.outputs.size()) {
    for (const TimedOutput& out : io_.outputs) require_usable(out);
    for (int version = 0; version < versions(); ++version)
      for (const TimedOutput& out : io_.outputs)
        golden_storage_[version].emplace_back(out.bytes + kCompareWordBytes);
    if (counters_.size() > 0)
      CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, counters_.bytes(), stream_));
  }

  bool has_outputs() const { return !io_.outputs.empty(); }

  // Untimed, before call `call`: poisons every output, then sets the call's input version.
  void prepare(int call) {
    for (const TimedOutput& out : io_.outputs)
      CUDA_CHECK(cudaMemsetAsync(out.data, kPoisonByte, out.bytes, stream_));
    if (io_.vary) io_.vary(stream_, call);
  }

  // After call `call`: the first call of a version becomes its golden copy; a later one is
  // compared with that copy on the device, adding to the call's counters.
  void check(int call) {
    const int version = call % versions();
    if (!has_golden_[version]) {
      for (std::size_t k = 0; k < io_.outputs.size(); ++k)
        CUDA_CHECK(cudaMemcpyAsync(golden(version, k), io_.outputs[k].data, io_.outputs[k].bytes,
                                   cudaMemcpyDefault, stream_));
      has_golden_[version] = true;
      return;
    }
    if (call >= rows_ - 1) throw std::logic_error("CallChecker: more calls than counted");
    for (std::size_t k = 0; k < io_.outputs.size(); ++k)
      compare(io_.outputs[k], io_.outputs[k].data, golden(version, k), counter(call, k));
  }

  // The sampled bytes of every output (see kWholeSampleBytes), for the off-stream check: all
  // pieces in one course::snapshot (a fresh stream, one wait) per look.
  std::vector<unsigned char> sample() {
    if (!sampled_) start_sampling();
    course::snapshot(pieces_, sampled_->data());
    return std::vector<unsigned char>(sampled_->data(), sampled_->data() + sampled_->size());
  }

  // After the last call: what the comparisons found, named by call. `warmups` and `timed`
  // say how the call numbers split into warm-ups, timed calls and calls after the loop.
  std::vector<std::string> problems(int warmups, int timed) {
    std::vector<std::string> found;
    if (!has_outputs()) return found;
    if (versions() == 2) {
      // Byte-exact whatever the outputs' comparison: a cached result is an identical copy.
      for (std::size_t k = 0; k < io_.outputs.size(); ++k)
        count_byte_differences<<<blocks_, kCompareThreads, 0, stream_>>>(
            golden(1, k), golden(0, k), io_.outputs[k].bytes,
            head_of(io_.outputs[k].data, io_.outputs[k].bytes), counter(rows_ - 1, k));
      CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<unsigned long long> counts(counters_.size());
    CUDA_CHECK(cudaMemcpy(counts.data(), counters_.data(), counters_.bytes(),
                          cudaMemcpyDeviceToHost));
    const std::size_t outputs = io_.outputs.size();
    int first_bad = -1, bad_calls = 0;
    std::size_t bad_output = 0;
    for (int call = 0; call < rows_ - 1; ++call)
      for (std::size_t k = 0; k < outputs; ++k)
        if (counts[call * outputs + k] > 0) {
          if (first_bad < 0) {
            first_bad = call;
            bad_output = k;
          }
          ++bad_calls;
          break;
        }
    if (first_bad >= 0) {
      const TimedOutput& out = io_.outputs[bad_output];
      const bool exact = out.compare == TimedOutput::Compare::Exact;
      std::string text = describe_call(first_bad, warmups, timed) + " left " +
                         std::to_string(counts[first_bad * outputs + bad_output]) +
                         (exact ? " bytes of " : " values of ") + out.name +
                         (exact ? " different from" : " outside the tolerance of") +
                         (versions() == 2 ? " the warm-up on the same inputs"
                                          : " the first warm-up");
      if (bad_calls > 1) text += " (" + std::to_string(bad_calls - 1) + " later calls too)";
      found.push_back(text + ": the work was skipped or its result cached");
    }
    if (versions() == 2) {
      unsigned long long changed = 0;
      for (std::size_t k = 0; k < outputs; ++k) changed += counts[(rows_ - 1) * outputs + k];
      if (changed == 0)
        found.push_back("the output did not change when the input did: results cached (the "
                        "two input versions gave byte-identical outputs)");
    }
    return found;
  }

 private:
  int versions() const { return io_.vary ? 2 : 1; }

  // The golden copy starts at the output's address modulo 16, so the two compare by words.
  unsigned char* golden(int version, std::size_t k) {
    return golden_storage_[version][k].data() + misalignment_of(io_.outputs[k].data);
  }

  unsigned long long* counter(int row, std::size_t k) {
    return counters_.data() + static_cast<std::size_t>(row) * io_.outputs.size() + k;
  }

  static void require_usable(const TimedOutput& out) {
    if (out.data == nullptr || out.bytes == 0)
      throw std::invalid_argument("timed output " + out.name + " is empty");
    const std::size_t size = out.compare == TimedOutput::Compare::Float    ? sizeof(float)
                             : out.compare == TimedOutput::Compare::Double ? sizeof(double)
                                                                           : 1;
    if (out.bytes % size != 0 || reinterpret_cast<std::uintptr_t>(out.data) % size != 0)
      throw std::invalid_argument("timed output " + out.name +
                                  " is compared by value but is not an aligned array of them");
  }

  void compare(const TimedOutput& out, const void* actual, const unsigned char* expected,
               unsigned long long* differences) {
    switch (out.compare) {
      case TimedOutput::Compare::Exact:
        count_byte_differences<<<blocks_, kCompareThreads, 0, stream_>>>(
            static_cast<const unsigned char*>(actual), expected, out.bytes,
            head_of(actual, out.bytes), differences);
        break;
      case TimedOutput::Compare::Float:
        count_value_differences<<<blocks_, kCompareThreads, 0, stream_>>>(
            static_cast<const float*>(actual), reinterpret_cast<const float*>(expected),
            out.bytes / sizeof(float), out.tolerance.rel, out.tolerance.abs, differences);
        break;
      case TimedOutput::Compare::Double:
        count_value_differences<<<blocks_, kCompareThreads, 0, stream_>>>(
            static_cast<const double*>(actual), reinterpret_cast<const double*>(expected),
            out.bytes / sizeof(double), out.tolerance.rel, out.tolerance.abs, differences);
        break;
    }
    CUDA_CHECK(cudaGetLastError());
  }

  static std::string describe_call(int call, int warmups, int timed) {
    if (call < warmups)
      return "warm-up call " + std::to_string(call + 1) + " of " + std::to_string(warmups);
    if (call < warmups + timed)
      return "timed call " + std::to_string(call - warmups + 1) + " of " + std::to_string(timed);
    return "a call after the timed loop";
  }

  // (offset, bytes) of the pieces the off-stream check copies.
  static std::vector<std::pair<std::size_t, std::size_t>> sampled_ranges(std::size_t bytes) {
    if (bytes <= kWholeSampleBytes) return {{0, bytes}};
    std::vector<std::pair<std::size_t, std::size_t>> ranges = {
        {0, kEdgeSampleBytes},
        {bytes / 2 - kEdgeSampleBytes / 2, kEdgeSampleBytes},
        {bytes - kEdgeSampleBytes, kEdgeSampleBytes}};
    for (int k = 0; k < kStridedSamples; ++k)
      ranges.emplace_back(std::min(bytes / kStridedSamples * k, bytes - kStridedSampleBytes),
                          kStridedSampleBytes);
    return ranges;
  }

  // Made before the first look, while the stream still runs: a pinned allocation can wait
  // for the device, which a held stream would keep from returning.
  void start_sampling() {
    std::size_t total = 0;
    for (const TimedOutput& out : io_.outputs)
      for (const auto& [offset, bytes] : sampled_ranges(out.bytes)) {
        pieces_.push_back({static_cast<const unsigned char*>(out.data) + offset, bytes});
        total += bytes;
      }
    sampled_.emplace(total);
  }

  const TimedIo& io_;
  cudaStream_t stream_;
  int blocks_;
  std::vector<course::Piece> pieces_;                    // what every look copies
  std::optional<PinnedBuffer<unsigned char>> sampled_;  // where every look's pieces land
  int rows_;  // one per call, then one for the comparison of the two golden copies
  DeviceBuffer<unsigned long long> counters_;
  std::vector<DeviceBuffer<unsigned char>> golden_storage_[2];
  bool has_golden_[2] = {false, false};
};

Measurement& Benchmark::add_measurement(const std::string& name, double work_per_run,
                                        Unit unit) {
  measurements_.push_back({});
  Measurement& m = measurements_.back();
  m.name = name;
  m.unit = unit;
  m.work_per_run = work_per_run;
  return m;
}

Measurement& Benchmark::time(const std::string& name, double work_per_run, Unit unit,
                             const std::function<void(cudaStream_t)>& run, double budget_s) {
  return time_checked(name, work_per_run, unit, run, nullptr, budget_s);
}

Measurement& Benchmark::time(const std::string& name, double work_per_run, Unit unit,
                             const std::function<void(cudaStream_t)>& run, const TimedIo& io,
                             double budget_s) {
  return time_checked(name, work_per_run, unit, run, &io, budget_s);
}

Measurement& Benchmark::time_checked(const std::string& name, double work_per_run, Unit unit,
                                     const std::function<void(cudaStream_t)>& run,
                                     const TimedIo* io, double budget_s) {
  const double budget = budget_s > 0.0 ? budget_s : options_.budget_s;
  Measurement& m = add_measurement(name, work_per_run, unit);
  if (options_.profile) {
    profile_once(m, run, io);
    return m;
  }
  const auto began = std::chrono::steady_clock::now();
  m.started_s = std::chrono::duration<double>(began - created_).count();
  try {
    reset_cache_state();
    std::optional<CallChecker> checker;
    if (io != nullptr)
      checker.emplace(*io, stream(), prop_.multiProcessorCount * 4,
                      kWarmups + options_.max_repeats + 2 * kCallsAfterLoop);
    CallChecker* const checked = checker ? &*checker : nullptr;

    warm_up(run, checked);
    timed_loop(m, budget, run, checked);
    CUDA_CHECK(cudaGetLastError());
    m.median_ms = median(m.samples_ms);
    m.min_ms = *std::min_element(m.samples_ms.begin(), m.samples_ms.end());
    m.max_ms = *std::max_element(m.samples_ms.begin(), m.samples_ms.end());
    m.rate = rate_of(work_per_run, m.median_ms, unit);
    const MedianInterval interval = median_interval(m.samples_ms);
    if (interval.known) {
      m.ci_low_ms = interval.low;
      m.ci_high_ms = interval.high;
    }

    // Calls after the loop get even numbers: input version 0, the original inputs.
    const int timed = static_cast<int>(m.samples_ms.size());
    int call = kWarmups + timed;
    call += call % 2;
    std::vector<Problem> problems;
    problems.push_back(host_time_problem(m, run, checked, call));
    call += 2 * kHostTimedCalls;
    if (checked != nullptr && checked->has_outputs() && !io->waits_for_stream)
      problems.push_back(off_stream_problem(run, *checked, call, held_window_ms(m.host_ms)));
    if (checked != nullptr)
      for (std::string& problem : checked->problems(kWarmups, timed))
        problems.push_back({std::move(problem), false});
    bool all_from_timing = true;
    for (const Problem& problem : problems) {
      if (problem.text.empty()) continue;
      m.valid = false;
      m.problem += (m.problem.empty() ? "" : "; ") + problem.text;
      all_from_timing = all_from_timing && problem.from_timing;
    }
    m.timing_only = !m.valid && all_from_timing;
  } catch (const std::exception& error) {
    m.valid = false;
    m.problem = error.what();
  }
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return m;
}

void Benchmark::profile_once(Measurement& m, const std::function<void(cudaStream_t)>& run,
                             const TimedIo* io) {
  try {
    reset_cache_state();  // the cache state a timed measurement starts from
    if (io != nullptr && io->vary) io->vary(stream(), 0);  // the original inputs
    stream_->synchronize();
    // Only the call's own launches fall in the range: set-up before it has ended.
    nvtxRangePushA(m.name.c_str());
    profile_ranges_.push_back(m.name);
    try {
      // First in the range: where ncu's list of kernels, in launch order, reaches this range.
      profile_range_marker<<<1, 1, 0, stream()>>>();
      // The one call's time, as a bench that sizes later work from an earlier measurement
      // (overlap_pipeline) reads it; under a profiler it says little about the kernel.
      GpuTimer timer(stream());
      timer.start();
      run(stream());
      timer.stop();
      m.samples_ms = {static_cast<double>(timer.elapsed_ms())};
      m.median_ms = m.min_ms = m.max_ms = m.samples_ms.front();
      m.rate = rate_of(m.work_per_run, m.median_ms, m.unit);
      stream_->synchronize();
    } catch (...) {
      nvtxRangePop();
      throw;
    }
    nvtxRangePop();
    CUDA_CHECK(cudaGetLastError());
  } catch (const std::exception& error) {
    m.valid = false;
    m.problem = error.what();
  }
}

void Benchmark::warm_up(const std::function<void(cudaStream_t)>& run, CallChecker* checker) {
  for (int call = 0; call < kWarmups; ++call) {
    if (checker != nullptr) checker->prepare(call);
    run(stream());
    if (checker != nullptr) checker->check(call);
  }
  stream_->synchronize();
}

void Benchmark::timed_loop(Measurement& m, double budget,
                           const std::function<void(cudaStream_t)>& run, CallChecker* checker) {
  GpuTimer timer(stream());
  const auto began = std::chrono::steady_clock::now();
  while (static_cast<int>(m.samples_ms.size()) < options_.max_repeats) {
    const int call = kWarmups + static_cast<int>(m.samples_ms.size());
    if (checker != nullptr) checker->prepare(call);
    flush_l2();  // last before the timed call, so the poison and the input change are evicted
    timer.start();
    run(stream());
    timer.stop();
    // Enqueued behind the stop event: the comparison is never timed, and needs no wait here.
    if (checker != nullptr) checker->check(call);
    m.samples_ms.push_back(timer.elapsed_ms());
    const int count = static_cast<int>(m.samples_ms.size());
    if (count < options_.min_repeats || options_.min_repeats == options_.max_repeats) continue;
    const double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (median_precision(m.samples_ms) <= options_.target_precision) {
      m.stopped = "precision";
      return;
    }
    if (spent > budget) {
      m.stopped = "budget";
      return;
    }
  }
  m.stopped = options_.min_repeats == options_.max_repeats ? "fixed" : "repeats";
}

Problem Benchmark::off_stream_problem(const std::function<void(cudaStream_t)>& run,
                                      CallChecker& checker, int call, double window_ms) {
  checker.prepare(call);
  stream_->synchronize();
  const std::vector<unsigned char> before = checker.sample();
  const HeldCall held =
      call_held(stream(), run, [&] { return checker.sample() != before; }, window_ms);
  stream_->synchronize();
  checker.check(call);
  // Once the gate gave up the stream ran, so a changed output says nothing more.
  // The gate gives up after a time: a call that blocked is told by timing alone.
  if (held.gave_up)
    return {"the launcher waited for the device instead of only enqueueing work on its stream "
            "(cudaDeviceSynchronize, cudaStreamSynchronize, a synchronous copy; "
            "COURSE_SYNC_LAUNCHES=1 does it too)",
            true};
  if (held.changed)
    return {"the output was written while the benchmark's stream was held: the work ran "
            "outside the stream it was given (default stream, a stream of its own, the host)",
            false};
  return {};
}

Problem Benchmark::host_time_problem(Measurement& m,
                                     const std::function<void(cudaStream_t)>& run,
                                     CallChecker* checker, int call) {
  Event start, stop;
  double best_wall_ms = std::numeric_limits<double>::infinity();
  float stream_ms_of_best = 0.0f;
  for (int k = 0; k < kHostTimedCalls; ++k, call += 2) {
    if (checker != nullptr) checker->prepare(call);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto began = std::chrono::steady_clock::now();
    start.record(stream());
    run(stream());
    stop.record(stream());
    CUDA_CHECK(cudaDeviceSynchronize());
    const double wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began)
            .count();
    if (checker != nullptr) checker->check(call);
    float stream_ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&stream_ms, start, stop));
    if (wall_ms < best_wall_ms) {
      best_wall_ms = wall_ms;
      stream_ms_of_best = stream_ms;
    }
  }
  m.host_ms = best_wall_ms;
  if (best_wall_ms <= kHostTimeFactor * m.median_ms + kHostTimeSlackMs) return {};
  char text[256];
  std::snprintf(text, sizeof text,
                "the call took %.3f ms of wall time but only %.3f ms on its stream (timed "
                "median %.3f ms): work ran on the host or outside the stream",
                best_wall_ms, static_cast<double>(stream_ms_of_best), m.median_ms);
  return {text, true};
}

Measurement& Benchmark::shared(const std::string& key, const std::string& name,
                              double work_per_run, Unit unit,
                              const std::function<void(cudaStream_t)>& run, const TimedIo& io,
                              double budget_s) {
  keys_seen_.push_back(key);
  const auto& only = options_.only_keys;
  if (!only.empty() && std::find(only.begin(), only.end(), key) == only.end()) {
    skipped_.push_back({});
    skipped_.back().name = name;
    return skipped_.back();
  }
  if (!options_.ceilings_elsewhere || options_.profile) {
    Measurement& m = time(name, work_per_run, unit, run, io, budget_s);
    m.key = key;
    m.elsewhere = options_.ceilings_elsewhere;
    return m;
  }
  Measurement& m = add_measurement(name, work_per_run, unit);
  m.key = key;
  m.elsewhere = true;
  try {
    if (!io.outputs.empty()) {  // version 0, the original inputs, as after a timed loop
      if (io.vary) io.vary(stream(), 0);
      run(stream());
      stream_->synchronize();
      CUDA_CHECK(cudaGetLastError());
    }
  } catch (const std::exception& error) {
    m.valid = false;
    m.problem = error.what();
  }
  return m;
}

Measurement& Benchmark::copy_ceiling(std::size_t bytes, const std::string& name) {
  const std::size_t count = std::max<std::size_t>(bytes / sizeof(float4), 1);
  const double work = 2.0 * static_cast<double>(count * sizeof(float4));
  const std::string key = "copy:" + std::to_string(count * sizeof(float4));
  const int threads = 256;
  const int blocks = prop_.multiProcessorCount * 8;
  std::optional<DeviceBuffer<float4>> in, out;
  // Nothing to hold when the copy is only recorded; a profile runs it once.
  if (!options_.ceilings_elsewhere || options_.profile) {
    in.emplace(count);
    out.emplace(count);
    in->fill_bytes(0x3c);
  }
  const TimedIo io = out ? TimedIo{{exact_output(*out, name + " output")}} : TimedIo{};
  return shared(key, name, work, Unit::GBps,
                [&](cudaStream_t s) {
                  copy_float4_kernel<<<blocks, threads, 0, s>>>(in->data(), out->data(), count);
                },
                io);
}

Measurement& Benchmark::record(const std::string& name, double work_per_run, Unit unit,
                               std::vector<double> samples_ms) {
  Measurement& m = add_measurement(name, work_per_run, unit);
  if (options_.profile) return m;  // timed by the bench, outside any range: nothing to keep
  m.samples_ms = std::move(samples_ms);
  const bool positive = std::all_of(m.samples_ms.begin(), m.samples_ms.end(),
                                    [](double ms) { return ms > 0.0; });
  if (m.samples_ms.empty() || !positive) {
    m.valid = false;
    m.problem = m.samples_ms.empty() ? "no samples recorded" : "a sample is not a positive time";
    return m;
  }
  m.median_ms = median(m.samples_ms);
  m.min_ms = *std::min_element(m.samples_ms.begin(), m.samples_ms.end());
  m.max_ms = *std::max_element(m.samples_ms.begin(), m.samples_ms.end());
  m.rate = rate_of(work_per_run, m.median_ms, unit);
  return m;
}

Measurement* Benchmark::find(const std::string& name) {
  for (auto& m : measurements_)
    if (m.name == name) return &m;
  return nullptr;
}

void Benchmark::check(const std::string& name, const Comparison& comparison) {
  if (options_.profile) return;  // one untimed call per measurement: nothing to vouch for
  Measurement* m = find(name);
  const bool skipped = std::any_of(skipped_.begin(), skipped_.end(),
                                   [&](const Measurement& s) { return s.name == name; });
  if (m == nullptr && skipped) return;  // a ceiling this program was not asked for
  if (m == nullptr) {
    errors_.push_back("check of unknown measurement " + name);
    return;
  }
  if (comparison.ok) return;
  m->timing_only = false;  // a wrong output is shown, not inferred
  if (m->valid) {
    m->valid = false;
    m->problem = "wrong output in timed runs: " + comparison.summary();
  }
}

unsigned long long Benchmark::differing_bytes(const void* a, const void* b, std::size_t bytes) {
  if (bytes == 0) return 0;
  // Unaligned pairs (a and b at different addresses modulo 16) are compared by the host.
  if (misalignment_of(a) != misalignment_of(b)) return 1;
  DeviceBuffer<unsigned long long> count(1);
  CUDA_CHECK(cudaMemsetAsync(count.data(), 0, count.bytes(), stream()));
  const std::size_t head = head_of(a, bytes);
  count_byte_differences<<<prop_.multiProcessorCount * 4, kCompareThreads, 0, stream()>>>(
      static_cast<const unsigned char*>(a), static_cast<const unsigned char*>(b), bytes, head,
      count.data());
  CUDA_CHECK(cudaGetLastError());
  unsigned long long differences = 0;
  CUDA_CHECK(cudaMemcpyAsync(&differences, count.data(), sizeof differences,
                             cudaMemcpyDeviceToHost, stream()));
  stream_->synchronize();
  return differences;
}

void Benchmark::require(const std::string& name, bool ok, const std::string& message) {
  if (options_.profile) return;  // the facts of timed runs, which a profile has none of
  requirements_.push_back({name, ok, message});
}

int Benchmark::finish() {
  for (const std::string& key : options_.only_keys)
    if (std::find(keys_seen_.begin(), keys_seen_.end(), key) == keys_seen_.end())
      errors_.push_back("no ceiling " + key + " in this program");
  bool all_ok = errors_.empty();
  std::printf("\n%s on %s (cc %d.%d, %d SMs, %.0f MB L2)\n", title_.c_str(), prop_.name,
              prop_.major, prop_.minor, prop_.multiProcessorCount, prop_.l2CacheSize / 1e6);
  std::printf("%-36s %12s %14s %8s\n", "measurement", "median ms", "rate", "repeats");
  for (const auto& m : measurements_) {
    if (!m.valid) {
      all_ok = false;
      std::printf("%-36s %s\n", m.name.c_str(), ("INVALID: " + m.problem).c_str());
      continue;
    }
    if (options_.profile) {
      std::printf("%-36s run once, untimed, in NVTX range \"%s\"\n", m.name.c_str(),
                  m.name.c_str());
      continue;
    }
    if (m.elsewhere) {
      std::printf("%-36s timed once per run by the course's ceilings program (%s)\n",
                  m.name.c_str(), m.key.c_str());
      continue;
    }
    std::printf("%-36s %12.4f %9.1f %-7s %4zu\n", m.name.c_str(), m.median_ms, m.rate,
                unit_name(m.unit), m.samples_ms.size());
  }
  for (const auto& r : requirements_) {
    if (!r.ok) all_ok = false;
    std::printf("%-36s %s %s\n", r.name.c_str(), r.ok ? "ok" : "FAILED", r.message.c_str());
  }
  for (const auto& e : errors_) std::printf("error: %s\n", e.c_str());

  if (!options_.json_path.empty()) {
    JsonWriter json;
    // The run's nonce marks the file as the harness's own (course/results.h).
    json.begin_object().field("schema", 1).field("title", title_).field("nonce", results_nonce());
    if (options_.profile) {
      json.field("profile", true);
      json.key("profile_ranges").begin_array();
      for (const auto& name : profile_ranges_) json.value(name);
      json.end_array();
    }
    // Where the program's time went: starting CUDA (the context, its modules), everything
    // else outside the measurements (inputs, references, checks), and the measurements.
    double measured_s = 0.0;
    for (const auto& m : measurements_) measured_s += m.wall_s;
    json.key("timing").begin_object();
    json.field("init_s", init_s_)
        .field("measured_s", measured_s)
        .field("total_s", seconds_since(created_));
    json.end_object();
    json.key("device").begin_object();
    json.field("name", prop_.name)
        .field("cc", std::to_string(prop_.major) + "." + std::to_string(prop_.minor))
        .field("sms", prop_.multiProcessorCount)
        .field("l2_bytes", prop_.l2CacheSize);
    json.end_object();
    json.key("measurements").begin_array();
    for (const auto& m : measurements_) {
      json.begin_object()
          .field("name", m.name)
          .field("unit", unit_name(m.unit))
          .field("work_per_run", m.work_per_run)
          .field("median_ms", m.median_ms)
          .field("min_ms", m.min_ms)
          .field("max_ms", m.max_ms)
          .field("repeats", m.samples_ms.size())
          .field("ci_low_ms", m.ci_low_ms)
          .field("ci_high_ms", m.ci_high_ms)
          .field("stopped", m.stopped)
          .field("wall_s", m.wall_s)
          .field("started_s", m.started_s)
          .field("rate", m.rate)
          .field("valid", m.valid)
          .field("problem", m.problem)
          .field("host_ms", m.host_ms)
          .field("key", m.key)
          .field("elsewhere", m.elsewhere)
          .field("timing_only", m.timing_only)
          .end_object();
    }
    json.end_array();
    json.key("requirements").begin_array();
    for (const auto& r : requirements_)
      json.begin_object().field("name", r.name).field("ok", r.ok).field("message", r.message)
          .end_object();
    json.end_array();
    json.key("errors").begin_array();
    for (const auto& e : errors_) json.value(e);
    json.end_array();
    // Last, so that a file cut short by a crash is recognisably incomplete.
    json.field("completed", true).end_object();
    std::ofstream file(options_.json_path);
    file << json.str() << '\n';
    if (!file) {
      std::fprintf(stderr, "cannot write %s\n", options_.json_path.c_str());
      return 1;
    }
  }
  return all_ok ? 0 : 1;
}

int benchmark_main(int argc, char** argv, void (*body)(Benchmark&)) {
  // Modules load when the program starts, not at a kernel's first launch: a lazy load can wait
  // for the whole device, and so for a stream held shut by a course::StreamGate.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  const char* slash = std::strrchr(argv[0], '/');
  const std::string title = slash != nullptr ? slash + 1 : argv[0];
  try {
    Benchmark bench(argc, argv, title);
    try {
      body(bench);
    } catch (const std::exception& error) {
      bench.fail(error.what());
    }
    return bench.finish();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: benchmark could not start: %s\n", title.c_str(), error.what());
    return 1;
  }
}

}  // namespace course
