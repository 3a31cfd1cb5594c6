#include "course/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "course/check.h"

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

std::string json_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
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
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  // Twice the L2 size, so a memset over it evicts whatever the previous repeat left there.
  flush_bytes_ = std::max<std::size_t>(2 * static_cast<std::size_t>(prop_.l2CacheSize), 32u << 20);
  CUDA_CHECK(cudaMalloc(&flush_buffer_, flush_bytes_));
}

Benchmark::~Benchmark() {
  if (flush_buffer_ != nullptr) cudaFree(flush_buffer_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void Benchmark::reset_cache_state() {
  // Undo whatever earlier work left behind that would favour or penalise the next
  // measurement: persisting L2 lines, a persisting set-aside, an access policy window.
  if (prop_.persistingL2CacheMaxSize > 0) {
    cudaStreamAttrValue attribute{};
    attribute.accessPolicyWindow.num_bytes = 0;
    CUDA_CHECK(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &attribute));
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
  }
  CUDA_CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));
}

void Benchmark::flush_l2() {
  CUDA_CHECK(cudaMemsetAsync(flush_buffer_, 0, flush_bytes_, stream_));
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
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    struct EventPair {
      cudaEvent_t a, b;
      ~EventPair() { cudaEventDestroy(a); cudaEventDestroy(b); }
    } events{start, stop};

    for (int warmup = 0; warmup < 2; ++warmup) run(stream_);
    CUDA_CHECK(cudaStreamSynchronize(stream_));

    const auto began = std::chrono::steady_clock::now();
    while (static_cast<int>(m.samples_ms.size()) < options_.max_repeats) {
      flush_l2();
      CUDA_CHECK(cudaEventRecord(start, stream_));
      run(stream_);
      CUDA_CHECK(cudaEventRecord(stop, stream_));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      m.samples_ms.push_back(ms);
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
  float4* in = nullptr;
  float4* out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, count * sizeof(float4)));
  CUDA_CHECK(cudaMalloc(&out, count * sizeof(float4)));
  CUDA_CHECK(cudaMemset(in, 0x3c, count * sizeof(float4)));
  const int threads = 256;
  const int blocks = prop_.multiProcessorCount * 8;
  Measurement& m = time(name, 2.0 * static_cast<double>(count * sizeof(float4)), Unit::GBps,
                        [&](cudaStream_t s) {
                          copy_float4_kernel<<<blocks, threads, 0, s>>>(in, out, count);
                        });
  cudaFree(in);
  cudaFree(out);
  return m;
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
    std::ostringstream json;
    json.precision(9);
    json << "{\"schema\":1,\"title\":\"" << json_escape(title_) << "\",\"device\":{\"name\":\""
         << json_escape(prop_.name) << "\",\"cc\":\"" << prop_.major << "." << prop_.minor
         << "\",\"sms\":" << prop_.multiProcessorCount << ",\"l2_bytes\":" << prop_.l2CacheSize
         << "},\"measurements\":[";
    for (std::size_t i = 0; i < measurements_.size(); ++i) {
      const auto& m = measurements_[i];
      json << (i ? "," : "") << "{\"name\":\"" << json_escape(m.name) << "\",\"unit\":\""
           << unit_name(m.unit) << "\",\"work_per_run\":" << m.work_per_run
           << ",\"median_ms\":" << m.median_ms << ",\"min_ms\":" << m.min_ms
           << ",\"max_ms\":" << m.max_ms << ",\"repeats\":" << m.samples_ms.size()
           << ",\"rate\":" << m.rate << ",\"valid\":" << (m.valid ? "true" : "false")
           << ",\"problem\":\"" << json_escape(m.problem) << "\"}";
    }
    json << "],\"requirements\":[";
    for (std::size_t i = 0; i < requirements_.size(); ++i) {
      const auto& r = requirements_[i];
      json << (i ? "," : "") << "{\"name\":\"" << json_escape(r.name)
           << "\",\"ok\":" << (r.ok ? "true" : "false") << ",\"message\":\""
           << json_escape(r.message) << "\"}";
    }
    json << "],\"errors\":[";
    for (std::size_t i = 0; i < errors_.size(); ++i)
      json << (i ? "," : "") << "\"" << json_escape(errors_[i]) << "\"";
    json << "],\"completed\":true}\n";
    std::ofstream file(options_.json_path);
    file << json.str();
    if (!file) {
      std::fprintf(stderr, "cannot write %s\n", options_.json_path.c_str());
      return 1;
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace course
