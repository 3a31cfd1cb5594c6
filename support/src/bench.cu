#include "course/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "course/check.h"
#include "course/json.h"

namespace course {

namespace {

__global__ void copy_float4_kernel(const float4* __restrict__ in, float4* __restrict__ out,
                                   std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    out[i] = in[i];
}

[[noreturn]] void usage(const char* program, const char* problem) {
  std::fprintf(stderr, "%s: %s\nusage: %s [--json PATH] [--repeats N] [--budget SECONDS]\n",
               program, problem, program);
  std::exit(2);
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

double relative_spread(std::vector<double> values) {
  const double mid = percentile(values, 0.5);
  if (mid <= 0.0) return 0.0;
  return (percentile(values, 0.75) - percentile(values, 0.25)) / mid;
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

Benchmark::Benchmark(int argc, char** argv, std::string title) : title_(std::move(title)) {
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
    } else if (arg == "--budget") {
      options_.budget_s = std::atof(value().c_str());
      if (options_.budget_s <= 0) usage(argv[0], "--budget takes a positive number of seconds");
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

Measurement& Benchmark::time(const std::string& name, double work_per_run, Unit unit,
                             const std::function<void(cudaStream_t)>& run, double budget_s) {
  const double budget = budget_s > 0.0 ? budget_s : options_.budget_s;
  measurements_.push_back({});
  Measurement& m = measurements_.back();
  m.name = name;
  m.unit = unit;
  m.work_per_run = work_per_run;
  try {
    reset_cache_state();
    GpuTimer timer(stream());

    for (int warmup = 0; warmup < 2; ++warmup) run(stream());
    stream_->synchronize();

    const auto began = std::chrono::steady_clock::now();
    while (static_cast<int>(m.samples_ms.size()) < options_.max_repeats) {
      flush_l2();
      timer.start();
      run(stream());
      timer.stop();
      m.samples_ms.push_back(timer.elapsed_ms());
      const int count = static_cast<int>(m.samples_ms.size());
      if (count < options_.min_repeats) continue;
      const double spent =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      if (spent > budget || relative_spread(m.samples_ms) < options_.target_spread) break;
    }
    CUDA_CHECK(cudaGetLastError());
    m.median_ms = median(m.samples_ms);
    m.min_ms = *std::min_element(m.samples_ms.begin(), m.samples_ms.end());
    m.max_ms = *std::max_element(m.samples_ms.begin(), m.samples_ms.end());
    m.rate = rate_of(work_per_run, m.median_ms, unit);
  } catch (const std::exception& error) {
    m.valid = false;
    m.problem = error.what();
  }
  return m;
}

Measurement& Benchmark::copy_ceiling(std::size_t bytes, const std::string& name) {
  const std::size_t count = std::max<std::size_t>(bytes / sizeof(float4), 1);
  DeviceBuffer<float4> in(count), out(count);
  in.fill_bytes(0x3c);
  const int threads = 256;
  const int blocks = prop_.multiProcessorCount * 8;
  return time(name, 2.0 * static_cast<double>(in.bytes()), Unit::GBps, [&](cudaStream_t s) {
    copy_float4_kernel<<<blocks, threads, 0, s>>>(in.data(), out.data(), count);
  });
}

Measurement* Benchmark::find(const std::string& name) {
  for (auto& m : measurements_)
    if (m.name == name) return &m;
  return nullptr;
}

void Benchmark::check(const std::string& name, const Comparison& comparison) {
  Measurement* m = find(name);
  if (m == nullptr) {
    errors_.push_back("check of unknown measurement " + name);
    return;
  }
  if (!comparison.ok && m->valid) {
    m->valid = false;
    m->problem = "wrong output in timed runs: " + comparison.summary();
  }
}

void Benchmark::require(const std::string& name, bool ok, const std::string& message) {
  requirements_.push_back({name, ok, message});
}

int Benchmark::finish() {
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
    json.begin_object().field("schema", 1).field("title", title_);
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
          .field("rate", m.rate)
          .field("valid", m.valid)
          .field("problem", m.problem)
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

}  // namespace course
