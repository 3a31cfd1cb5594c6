// GPU tests of the support library (skipped, exit 77, without a GPU). The benchmark harness:
// state an exercise leaves behind cannot favour or penalise the next measurement
// (persisting-L2 set-aside, an access policy window and a cache preference are all undone by
// Benchmark::time before it measures); every timed call is checked, so a launcher that skips
// its work, returns a cached result or works outside the stream it is given is invalid, and an
// honest one is not. The device-side fills: the values a CPU reference
// recomputes with course::hashed_* are the ones on the device. The guarded output: a kernel
// writing one element too many, or one too early, is reported with the offset.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/check.h"
#include "course/device_random.h"
#include "course/stream_gate.h"
#include "course/testing.h"
#include "test_kernels.h"

namespace {

course::Benchmark make_benchmark() {
  static char name[] = "benchmark_gpu_test";
  static char* argv[] = {name, nullptr};
  return course::Benchmark(1, argv, "benchmark_gpu_test");
}

// Exactly kQuickRepeats timed calls: the per-call checks are what these tests look at, not
// the timing.
constexpr int kQuickRepeats = 5;

// About how many clock cycles of device 0 pass in `ms` milliseconds, for course_test::spin.
long long cycles_in_ms(int ms) {
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  return static_cast<long long>(clock_khz) * ms;
}

course::Benchmark make_quick_benchmark() {
  static char name[] = "benchmark_gpu_test";
  static char repeats_flag[] = "--repeats";
  static std::string repeats = std::to_string(kQuickRepeats);
  static char* argv[] = {name, repeats_flag, repeats.data(), nullptr};
  return course::Benchmark(3, argv, "benchmark_gpu_test");
}

// A Benchmark made from these arguments (after the program's name), as a benchmark's or a
// ceilings program's main makes it.
course::Benchmark make_benchmark_with(std::vector<std::string> args) {
  args.insert(args.begin(), "benchmark_gpu_test");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return course::Benchmark(static_cast<int>(args.size()), argv.data(), "benchmark_gpu_test");
}

constexpr std::size_t kOutputCount = std::size_t{1} << 16;

float random_value() {
  auto rng = course::testing::case_rng();
  return std::uniform_real_distribution<float>(1.0f, 2.0f)(rng);
}

::testing::AssertionResult mentions(const course::Measurement& m, const std::string& text) {
  if (m.problem.find(text) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the problem does not say \"" << text << "\": \""
                                       << m.problem << "\"";
}

TEST(BenchmarkCalls, AnHonestRunStaysValid) {
  auto bench = make_quick_benchmark();
  course::DeviceBuffer<float> out(kOutputCount);
  const float value = random_value();
  const auto& m = bench.time(
      "honest", static_cast<double>(out.bytes()), course::Unit::GBps,
      [&](cudaStream_t s) { course_test::write_range(out.data(), 0, kOutputCount, value, s); },
      course::TimedIo{{course::exact_output(out, "out")}});
  EXPECT_TRUE(m.valid) << m.problem;
  EXPECT_EQ(m.samples_ms.size(), static_cast<std::size_t>(kQuickRepeats));
  EXPECT_GT(m.host_ms, 0.0);
  EXPECT_EQ(out.download(), std::vector<float>(kOutputCount, value));
}

TEST(BenchmarkCalls, SkippingTheWorkAfterTheFirstCallIsInvalid) {
  auto bench = make_quick_benchmark();
  course::DeviceBuffer<float> out(kOutputCount);
  const float value = random_value();
  int calls = 0;
  const auto& m = bench.time(
      "works_once", static_cast<double>(out.bytes()), course::Unit::GBps,
      [&](cudaStream_t s) {
        if (calls++ == 0) course_test::write_range(out.data(), 0, kOutputCount, value, s);
      },
      course::TimedIo{{course::exact_output(out, "out")}});
  EXPECT_FALSE(m.valid);
  EXPECT_TRUE(mentions(m, "warm-up call 2 of 2 left "));
  EXPECT_TRUE(mentions(m, " bytes of out different from the first warm-up"));
  EXPECT_TRUE(mentions(m, "the work was skipped or its result cached"));
}

TEST(BenchmarkCalls, SkippingTimedCallsNamesTheFirstSkippedOne) {
  auto bench = make_quick_benchmark();
  course::DeviceBuffer<float> out(kOutputCount);
  const float value = random_value();
  int calls = 0;
  const int honest_calls = 2 + 3;  // both warm-ups and three timed calls
  const auto& m = bench.time(
      "tires", static_cast<double>(out.bytes()), course::Unit::GBps,
      [&](cudaStream_t s) {
        if (calls++ < honest_calls)
          course_test::write_range(out.data(), 0, kOutputCount, value, s);
      },
      course::TimedIo{{course::exact_output(out, "out")}});
  EXPECT_FALSE(m.valid);
  EXPECT_TRUE(mentions(m, "timed call 4 of " + std::to_string(kQuickRepeats) + " left"));
  EXPECT_TRUE(mentions(m, "the work was skipped or its result cached"));
}

// Seeded ints and their sum: a large input, an 8-byte output.
struct SumCase {
  std::vector<int> host;
  course::DeviceBuffer<int> in;
  course::DeviceBuffer<long long> out{1};
  long long expected = 0;
  explicit SumCase(std::vector<int> values)
      : host(std::move(values)), in(host),
        expected(std::accumulate(host.begin(), host.end(), 0LL)) {}
};

SumCase make_sum_case() {
  auto rng = course::testing::case_rng();
  std::uniform_int_distribution<int> value(-1000, 1000);
  std::vector<int> host(kOutputCount);
  for (int& v : host) v = value(rng);
  return SumCase(std::move(host));
}

TEST(BenchmarkCalls, AnHonestSumWithVaryingInputsStaysValidAndEndsOnTheOriginalInputs) {
  auto bench = make_quick_benchmark();
  SumCase sum = make_sum_case();
  const auto flip_lowest_bit = [](int v) { return v ^ 1; };
  const auto& m = bench.time(
      "honest_sum", static_cast<double>(sum.in.bytes()), course::Unit::GBps,
      [&](cudaStream_t s) {
        course_test::sum_ints(sum.in.data(), static_cast<int>(kOutputCount), sum.out.data(), s);
      },
      course::TimedIo{
          {course::exact_output(sum.out, "sum")},
          course::alternate_element(sum.in.data(), sum.host.size() / 3, flip_lowest_bit)});
  EXPECT_TRUE(m.valid) << m.problem;
  EXPECT_EQ(sum.out.download(), std::vector<long long>{sum.expected})
      << "the calls after the timed loop use the original inputs";
  EXPECT_EQ(sum.in.download(), sum.host) << "the original inputs are restored";
}

TEST(BenchmarkCalls, AResultCachedByPointerIsInvalid) {
  auto bench = make_quick_benchmark();
  SumCase sum = make_sum_case();
  // Computes once per input pointer, then copies the remembered sum: on the stream, and fast.
  std::map<const int*, course::DeviceBuffer<long long>> cache;
  const auto cached_sum = [&](cudaStream_t s) {
    auto found = cache.find(sum.in.data());
    if (found == cache.end()) {
      found = cache.emplace(sum.in.data(), course::DeviceBuffer<long long>(1)).first;
      course_test::sum_ints(sum.in.data(), static_cast<int>(kOutputCount), found->second.data(),
                            s);
    }
    CUDA_CHECK(cudaMemcpyAsync(sum.out.data(), found->second.data(), sizeof(long long),
                               cudaMemcpyDeviceToDevice, s));
  };
  const auto& m = bench.time(
      "cached_sum", static_cast<double>(sum.in.bytes()), course::Unit::GBps, cached_sum,
      course::TimedIo{{course::exact_output(sum.out, "sum")},
                      course::alternate_element(sum.in.data(), 0, [](int v) { return v ^ 1; })});
  EXPECT_FALSE(m.valid);
  EXPECT_TRUE(mentions(m, "the output did not change when the input did: results cached"));
  EXPECT_FALSE(m.timing_only);
}

TEST(BenchmarkCalls, ALaunchOnTheLegacyDefaultStreamIsInvalid) {
  auto bench = make_quick_benchmark();
  course::DeviceBuffer<float> out(kOutputCount);
  const float value = random_value();
  const auto& m = bench.time(
      "legacy_stream", static_cast<double>(out.bytes()), course::Unit::GBps,
      [&](cudaStream_t) {
        course_test::write_range(out.data(), 0, kOutputCount, value, cudaStreamLegacy);
      },
      course::TimedIo{{course::exact_output(out, "out")}});
  EXPECT_FALSE(m.valid);
  EXPECT_TRUE(mentions(m, "the output was written while the benchmark's stream was held"));
  EXPECT_FALSE(m.timing_only) << "an output written off the stream is shown, not inferred";
}

// Work on a stream of the launcher's own writes the output while the benchmark's stream is
// held: at once, or only after 8 ms, which the held call still sees since it watches for
// about twice the host-timed call rather than a fixed 2 ms.
struct OwnStreamWork {
  const char* name;
  int late_ms;           // spun on the launcher's stream before it writes
  const char* problem;   // what the measurement's problem must say
};

class OwnStream : public ::testing::TestWithParam<OwnStreamWork> {};

TEST_P(OwnStream, WorkOnAStreamOfTheLaunchersOwnIsInvalid) {
  auto bench = make_quick_benchmark();
  course::DeviceBuffer<float> out(kOutputCount);
  course::Stream own(cudaStreamNonBlocking);
  const float value = random_value();
  const OwnStreamWork work = GetParam();
  const auto& m = bench.time(
      "own_stream", static_cast<double>(out.bytes()), course::Unit::GBps,
      [&](cudaStream_t) {
        if (work.late_ms > 0) course_test::spin(cycles_in_ms(work.late_ms), own.get());
        course_test::write_range(out.data(), 0, kOutputCount, value, own);
      },
      course::TimedIo{{course::exact_output(out, "out")}});
  EXPECT_FALSE(m.valid);
  EXPECT_TRUE(mentions(m, work.problem)) << m.problem;
}

INSTANTIATE_TEST_SUITE_P(
    BenchmarkCalls, OwnStream,
    ::testing::Values(
        OwnStreamWork{"WritesAtOnce", 0, "outside the stream"},
        OwnStreamWork{"WritesAfter8Ms", 8,
                      "the output was written while the benchmark's stream was held"}),
    [](const ::testing::TestParamInfo<OwnStreamWork>& info) {
      return std::string(info.param.name);
    });

TEST(BenchmarkCalls, ComputingOnTheHostAndCopyingSynchronouslyIsInvalid) {
  auto bench = make_quick_benchmark();
  course::DeviceBuffer<float> out(kOutputCount);
  const float value = random_value();
  std::vector<float> host(kOutputCount);
  const auto& m = bench.time(
      "host_work", static_cast<double>(out.bytes()), course::Unit::GBps,
      [&](cudaStream_t) {
        std::fill(host.begin(), host.end(), value);
        CUDA_CHECK(cudaMemcpy(out.data(), host.data(), out.bytes(), cudaMemcpyHostToDevice));
      },
      course::TimedIo{{course::exact_output(out, "out")}});
  EXPECT_FALSE(m.valid);
  EXPECT_TRUE(mentions(m, "the output was written while the benchmark's stream was held"));
}

TEST(BenchmarkCalls, WaitingForTheDeviceInsideTheLauncherIsInvalid) {
  auto bench = make_quick_benchmark();
  course::DeviceBuffer<float> out(kOutputCount);
  const float value = random_value();
  const auto& m = bench.time(
      "waits", static_cast<double>(out.bytes()), course::Unit::GBps,
      [&](cudaStream_t s) {
        course_test::write_range(out.data(), 0, kOutputCount, value, s);
        CUDA_CHECK(cudaDeviceSynchronize());
      },
      course::TimedIo{{course::exact_output(out, "out")}});
  EXPECT_FALSE(m.valid);
  EXPECT_TRUE(mentions(m, "the launcher waited for the device"));
  EXPECT_TRUE(m.timing_only) << m.problem;
}

// Work the stream's events never see (here a kernel on another stream that writes no output)
// shows only in the wall time: invalid, and marked as inferred from timing, which the grader
// confirms on a second measurement before it says so.
TEST(BenchmarkCalls, WorkOffTheStreamSeenOnlyInTheWallTimeIsMarkedAsTiming) {
  auto bench = make_quick_benchmark();
  course::DeviceBuffer<float> out(kOutputCount);
  course::Stream other(cudaStreamNonBlocking);
  const float value = random_value();
  const auto& m = bench.time(
      "hidden_work", static_cast<double>(out.bytes()), course::Unit::GBps,
      [&](cudaStream_t s) {
        course_test::write_range(out.data(), 0, kOutputCount, value, s);
        course_test::spin(cycles_in_ms(5), other.get());
      },
      course::TimedIo{{course::exact_output(out, "out")}});
  EXPECT_FALSE(m.valid);
  EXPECT_TRUE(mentions(m, "work ran on the host or outside the stream"));
  EXPECT_TRUE(m.timing_only) << m.problem;
}

TEST(BenchmarkCalls, ALauncherThatWaitsByItsContractIsNotHeld) {
  auto bench = make_quick_benchmark();
  course::DeviceBuffer<float> out(kOutputCount);
  const float value = random_value();
  const auto& m = bench.time(
      "waits_by_contract", static_cast<double>(out.bytes()), course::Unit::GBps,
      [&](cudaStream_t s) {
        course_test::write_range(out.data(), 0, kOutputCount, value, s);
        CUDA_CHECK(cudaStreamSynchronize(s));
      },
      course::TimedIo{{course::exact_output(out, "out")}, {}, true});
  EXPECT_TRUE(m.valid) << m.problem;
}

// A launcher whose output moves by one unit in the last place from call to call, as float
// atomics may: invalid byte for byte, valid within a tolerance.
TEST(BenchmarkCalls, AToleranceAcceptsRoundingThatChangesBetweenCalls) {
  const float value = random_value();
  const float next = std::nextafter(value, 3.0f);
  for (const bool within_tolerance : {false, true}) {
    SCOPED_TRACE(within_tolerance ? "compared within a tolerance" : "compared byte for byte");
    auto bench = make_quick_benchmark();
    course::DeviceBuffer<float> out(kOutputCount);
    int calls = 0;
    const auto output = within_tolerance ? course::close_output(out, {1e-5, 0.0}, "out")
                                         : course::exact_output(out, "out");
    const auto& m = bench.time(
        "rounding", static_cast<double>(out.bytes()), course::Unit::GBps,
        [&](cudaStream_t s) {
          const float written = calls++ % 2 == 0 ? value : next;
          course_test::write_range(out.data(), 0, kOutputCount, written, s);
        },
        course::TimedIo{{output}});
    EXPECT_EQ(m.valid, within_tolerance) << m.problem;
  }
}

TEST(BenchmarkState, PersistingL2AndCacheConfigAreResetBeforeMeasuring) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.persistingL2CacheMaxSize == 0) GTEST_SKIP() << "no persisting L2 on this GPU";
  auto bench = make_benchmark();
  course::DeviceBuffer<char> hot(1 << 20);

  // What an exercise might leave behind.
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, prop.persistingL2CacheMaxSize));
  cudaStreamAttrValue window{};
  window.accessPolicyWindow.base_ptr = hot.data();
  window.accessPolicyWindow.num_bytes = hot.bytes();
  window.accessPolicyWindow.hitRatio = 1.0f;
  window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CUDA_CHECK(cudaStreamSetAttribute(bench.stream(), cudaStreamAttributeAccessPolicyWindow, &window));
  CUDA_CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));

  std::size_t limit_seen_by_run = 1;
  cudaStreamAttrValue window_seen_by_run{};
  cudaFuncCache config_seen_by_run = cudaFuncCachePreferShared;
  bench.time("state_probe", 1.0, course::Unit::GBps, [&](cudaStream_t s) {
    CUDA_CHECK(cudaDeviceGetLimit(&limit_seen_by_run, cudaLimitPersistingL2CacheSize));
    CUDA_CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &window_seen_by_run));
    CUDA_CHECK(cudaDeviceGetCacheConfig(&config_seen_by_run));
    CUDA_CHECK(cudaMemsetAsync(hot.data(), 0, hot.bytes(), s));
  });
  EXPECT_EQ(limit_seen_by_run, 0u) << "the persisting-L2 set-aside survived into the measurement";
  EXPECT_EQ(window_seen_by_run.accessPolicyWindow.num_bytes, 0u)
      << "the access policy window survived into the measurement";
  EXPECT_EQ(config_seen_by_run, cudaFuncCachePreferNone);
  ASSERT_NE(bench.find("state_probe"), nullptr);
  EXPECT_TRUE(bench.find("state_probe")->valid) << bench.find("state_probe")->problem;
}

TEST(BenchmarkErrors, AFailingRunIsInvalidNotFatal) {
  auto bench = make_benchmark();
  bench.time("fails", 1.0, course::Unit::GBps,
             [](cudaStream_t) { CUDA_CHECK(cudaErrorInvalidValue); });
  const course::Measurement* failed = bench.find("fails");
  ASSERT_NE(failed, nullptr);
  EXPECT_FALSE(failed->valid);
  EXPECT_NE(failed->problem.find("cudaErrorInvalidValue"), std::string::npos) << failed->problem;

  // A later measurement is unaffected, and a reference to the first one stays usable.
  course::DeviceBuffer<float> buffer(1 << 20);
  bench.time("memset", static_cast<double>(buffer.bytes()), course::Unit::GBps,
             [&](cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(buffer.data(), 0, buffer.bytes(), s)); });
  EXPECT_FALSE(failed->valid);
  EXPECT_TRUE(bench.find("memset")->valid);
  EXPECT_GT(bench.find("memset")->rate, 0.0);
}

TEST(BenchmarkCheckOnDevice, EqualOutputsPassAndOneChangedByteIsFoundAndNamed) {
  auto bench = make_quick_benchmark();
  // Odd lengths and an offset start: the comparison's unaligned head and tail are covered.
  const std::size_t n = (std::size_t{1} << 20) + 7;
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000) * 0.5f;
  course::DeviceBuffer<float> expected(host), same(host), changed(host);
  const float wrong = -1.0f;
  CUDA_CHECK(cudaMemcpy(changed.data() + n - 2, &wrong, sizeof wrong, cudaMemcpyHostToDevice));
  for (const char* name : {"same", "changed", "short"})
    bench.time(name, 1.0, course::Unit::GBps, [](cudaStream_t) {});
  bench.check_on_device("same", expected, same);
  bench.check_on_device("changed", expected, changed, {{}, "out"});
  course::DeviceBuffer<float> shorter(n - 1);
  bench.check_on_device("short", expected, shorter);
  EXPECT_TRUE(bench.find("same")->valid) << bench.find("same")->problem;
  const course::Measurement& bad = *bench.find("changed");
  EXPECT_FALSE(bad.valid);
  EXPECT_NE(bad.problem.find("wrong output"), std::string::npos) << bad.problem;
  EXPECT_NE(bad.problem.find(std::to_string(n - 2)), std::string::npos) << bad.problem;
  EXPECT_FALSE(bench.find("short")->valid);
}

TEST(HoldsOnly, EveryByteIsReadOnTheDeviceFromDeviceOrPinnedMemory) {
  const std::size_t bytes = (std::size_t{1} << 22) + 5;
  course::DeviceBuffer<unsigned char> device(bytes);
  device.fill_bytes(course::kPoisonByte);
  EXPECT_TRUE(course::holds_only(device.data(), bytes, course::kPoisonByte));
  EXPECT_FALSE(course::holds_only(device.data(), bytes, 0));
  EXPECT_TRUE(course::holds_only(device.data(), 0, 0)) << "no bytes: nothing differs";
  const unsigned char other = 0x7f;
  CUDA_CHECK(cudaMemcpy(device.data() + bytes - 1, &other, 1, cudaMemcpyHostToDevice));
  EXPECT_FALSE(course::holds_only(device.data(), bytes, course::kPoisonByte)) << "the last byte";
  EXPECT_TRUE(course::holds_only(device.data(), bytes - 1, course::kPoisonByte));
  unsigned char* pinned = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned, 4096));
  std::memset(pinned, 3, 4096);
  EXPECT_TRUE(course::holds_only(pinned, 4096, 3));
  pinned[4000] = 4;
  EXPECT_FALSE(course::holds_only(pinned, 4096, 3));
  CUDA_CHECK(cudaFreeHost(pinned));
}

TEST(BenchmarkRecord, SamplesTimedByTheExerciseBecomeAMeasurement) {
  auto bench = make_benchmark();
  const course::Measurement& latency =
      bench.record("latency", 4096.0, course::Unit::Gelems, {0.5, 0.1, 0.3, 0.2});
  ASSERT_TRUE(latency.valid) << latency.problem;
  EXPECT_DOUBLE_EQ(latency.median_ms, 0.25);
  EXPECT_DOUBLE_EQ(latency.min_ms, 0.1);
  EXPECT_DOUBLE_EQ(latency.max_ms, 0.5);
  EXPECT_DOUBLE_EQ(latency.rate, course::rate_of(4096.0, 0.25, course::Unit::Gelems));
  EXPECT_EQ(bench.find("latency"), &latency);

  // Nothing timed, or a time that cannot be one, is no measurement to score.
  EXPECT_FALSE(bench.record("empty", 1.0, course::Unit::Gelems, {}).valid);
  const course::Measurement& negative =
      bench.record("negative", 1.0, course::Unit::Gelems, {0.2, -0.1});
  EXPECT_FALSE(negative.valid);
  EXPECT_NE(negative.problem.find("not a positive time"), std::string::npos) << negative.problem;
}

TEST(BenchmarkCeiling, CopyCeilingIsMeasuredAndPlausible) {
  auto bench = make_benchmark();
  const course::Measurement& copy = bench.copy_ceiling(std::size_t{256} << 20);
  ASSERT_TRUE(copy.valid) << copy.problem;
  const auto& options = bench.options();
  EXPECT_GE(copy.samples_ms.size(), static_cast<std::size_t>(options.min_repeats));
  EXPECT_GT(copy.rate, 50.0);  // GB/s: any GPU of compute capability 7.0+ copies faster
  EXPECT_LE(copy.min_ms, copy.median_ms);
  EXPECT_LE(copy.median_ms, copy.max_ms);
  // The median's interval is reported, and the repeats stopped for a reason that holds.
  EXPECT_LE(copy.min_ms, copy.ci_low_ms);
  EXPECT_LE(copy.ci_low_ms, copy.median_ms);
  EXPECT_LE(copy.median_ms, copy.ci_high_ms);
  EXPECT_LE(copy.ci_high_ms, copy.max_ms);
  if (copy.stopped == "precision")
    EXPECT_LE(course::median_precision(copy.samples_ms), options.target_precision);
  else if (copy.stopped == "repeats")
    EXPECT_EQ(copy.samples_ms.size(), static_cast<std::size_t>(options.max_repeats));
  else
    EXPECT_EQ(copy.stopped, "budget");
}

TEST(BenchmarkRepeats, AFixedCountIsTakenWhole) {
  auto bench = make_quick_benchmark();
  const course::Measurement& copy = bench.copy_ceiling(std::size_t{16} << 20);
  ASSERT_TRUE(copy.valid) << copy.problem;
  EXPECT_EQ(copy.samples_ms.size(), static_cast<std::size_t>(kQuickRepeats));
  EXPECT_EQ(copy.stopped, "fixed");
}

TEST(BenchmarkRepeats, ALooseTargetStopsAtTheFewestRepeats) {
  // Within 50%: any six timings of a copy make it, so the floor is all that is taken.
  auto bench = make_benchmark_with({"--precision", "0.5"});
  const course::Measurement& copy = bench.copy_ceiling(std::size_t{16} << 20);
  ASSERT_TRUE(copy.valid) << copy.problem;
  EXPECT_EQ(copy.samples_ms.size(), static_cast<std::size_t>(bench.options().min_repeats));
  EXPECT_EQ(copy.stopped, "precision");
  EXPECT_GT(copy.ci_high_ms, 0.0);
}

TEST(BenchmarkStart, WorkLeftOnTheDeviceEndsBeforeTheBenchmarkStarts) {
  // A static constructor of the student's could leave a kernel holding the GPU to slow the
  // baselines timed first; the harness waits for it before anything is timed.
  course::Stream other(cudaStreamNonBlocking);
  course_test::spin(cycles_in_ms(300), other.get());
  ASSERT_EQ(cudaStreamQuery(other.get()), cudaErrorNotReady);
  auto bench = make_benchmark();
  EXPECT_EQ(cudaStreamQuery(other.get()), cudaSuccess);
}

// Runs sum_ints as a shared ceiling with key "sum:<n>".
const course::Measurement& shared_sum(course::Benchmark& bench, SumCase& sum) {
  return bench.shared(
      "sum:" + std::to_string(kOutputCount), "shared_sum", static_cast<double>(sum.in.bytes()),
      course::Unit::GBps,
      [&](cudaStream_t s) {
        course_test::sum_ints(sum.in.data(), static_cast<int>(kOutputCount), sum.out.data(), s);
      },
      course::TimedIo{{course::exact_output(sum.out, "sum")},
                      course::alternate_element(sum.in.data(), 5, [](int v) { return v ^ 1; })});
}

TEST(BenchmarkShared, RunByHandASharedCeilingIsTimedHere) {
  auto bench = make_quick_benchmark();
  SumCase sum = make_sum_case();
  const course::Measurement& m = shared_sum(bench, sum);
  ASSERT_TRUE(m.valid) << m.problem;
  EXPECT_FALSE(m.elsewhere);
  EXPECT_EQ(m.key, "sum:" + std::to_string(kOutputCount));
  EXPECT_EQ(m.samples_ms.size(), static_cast<std::size_t>(kQuickRepeats));
  EXPECT_GT(m.rate, 0.0);
}

TEST(BenchmarkShared, UnderTheGraderItIsRecordedNotTimedAndItsOutputIsThere) {
  auto bench = make_benchmark_with({"--ceilings-elsewhere"});
  SumCase sum = make_sum_case();
  sum.out.fill_bytes(course::kPoisonByte);
  const course::Measurement& m = shared_sum(bench, sum);
  ASSERT_TRUE(m.valid) << m.problem;
  EXPECT_TRUE(m.elsewhere);
  EXPECT_EQ(m.key, "sum:" + std::to_string(kOutputCount));
  EXPECT_TRUE(m.samples_ms.empty());
  EXPECT_EQ(m.rate, 0.0);
  EXPECT_DOUBLE_EQ(m.work_per_run, static_cast<double>(sum.in.bytes()));
  // Run once on the original inputs, so a check() of the output that follows still applies.
  EXPECT_EQ(sum.out.download(), std::vector<long long>{sum.expected});
  EXPECT_EQ(sum.in.download(), sum.host);

  const course::Measurement& copy = bench.copy_ceiling(std::size_t{1} << 20, "copy_1m");
  EXPECT_TRUE(copy.elsewhere && copy.valid);
  EXPECT_EQ(copy.key, "copy:1048576");
  EXPECT_DOUBLE_EQ(copy.work_per_run, 2.0 * (1 << 20));  // read plus written
}

TEST(BenchmarkShared, ACeilingsProgramTimesOnlyTheKeysItIsAskedFor) {
  auto bench = make_benchmark_with({"--repeats", "3", "--only", "copy:1048576"});
  const course::Measurement& asked = bench.copy_ceiling(std::size_t{1} << 20, "copy_1m");
  ASSERT_TRUE(asked.valid) << asked.problem;
  EXPECT_EQ(asked.samples_ms.size(), 3u);
  EXPECT_EQ(asked.key, "copy:1048576");
  bench.copy_ceiling(std::size_t{2} << 20, "copy_2m");
  EXPECT_EQ(bench.find("copy_2m"), nullptr);  // not asked for: neither timed nor reported
  // A check of a measurement it skipped is no error either.
  bench.check("copy_2m", course::compare_exact(std::vector<int>{1}, std::vector<int>{2}, {}));
  EXPECT_EQ(bench.finish(), 0);

  auto missing = make_benchmark_with({"--repeats", "3", "--only", "copy:1048576,copy:5"});
  missing.copy_ceiling(std::size_t{1} << 20, "copy_1m");
  EXPECT_EQ(missing.finish(), 1) << "copy:5 was asked for and nothing measured it";
}

// Sizes that do not fill a block, that need the grid-stride loop several times, and n = 0.
TEST(FillHashed, DeviceValuesEqualTheHostFunctions) {
  const std::uint64_t seed = 0x5eed1234abcdull;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{257},
                              (std::size_t{1} << 22) + 3}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    course::DeviceBuffer<int> ints(n + 1);
    course::DeviceBuffer<unsigned> uints(n + 1);
    course::DeviceBuffer<float> floats(n + 1), ranged(n + 1);
    for (auto* bytes : {static_cast<void*>(ints.data()), static_cast<void*>(uints.data()),
                        static_cast<void*>(floats.data()), static_cast<void*>(ranged.data())})
      course::testing::fill_device_bytes(bytes, course::kPoisonByte, (n + 1) * 4);
    course::Stream stream;
    course::fill_hashed(ints.data(), n, seed, stream);
    course::fill_hashed(uints.data(), n, seed, stream);
    course::fill_hashed(floats.data(), n, seed, stream);
    course::fill_hashed(ranged.data(), n, seed + 1, stream, -10.0f, 10.0f);
    stream.synchronize();
    std::vector<int> want_ints(n + 1, -1);
    std::vector<unsigned> want_uints(n + 1, ~0u);
    std::vector<float> want_floats(n + 1), want_ranged(n + 1);
    for (std::size_t i = 0; i < n; ++i) {
      want_ints[i] = course::hashed_int(i, seed);
      want_uints[i] = course::hashed_uint(i, seed);
      want_floats[i] = course::hashed_float(i, seed);
      want_ranged[i] = course::hashed_float(i, seed + 1, -10.0f, 10.0f);
    }
    // The element after the n filled ones keeps its poison: the fill stops at n.
    std::memset(&want_floats[n], course::kPoisonByte, sizeof(float));
    std::memset(&want_ranged[n], course::kPoisonByte, sizeof(float));
    EXPECT_TRUE(course::testing::equal(want_ints, ints.download(), {{}, "int fill"}));
    EXPECT_TRUE(course::testing::equal(want_uints, uints.download(), {{}, "unsigned fill"}));
    EXPECT_TRUE(course::testing::equal(want_floats, floats.download(), {{}, "float fill"}));
    EXPECT_TRUE(course::testing::equal(want_ranged, ranged.download(),
                                       {{}, "float fill in [-10, 10)"}));
  }
}

TEST(GuardedOutput, AKernelWritingOnePastTheEndIsReported) {
  course::testing::GuardedOutput<float> out(1000);
  course_test::write_range(out.data(), 0, 1000, 1.0f, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(out.guards_intact("out"));
  EXPECT_EQ(out.download(), std::vector<float>(1000, 1.0f));

  course_test::write_range(out.data(), 0, 1001, 2.0f, nullptr);  // off by one
  CUDA_CHECK(cudaDeviceSynchronize());
  const ::testing::AssertionResult result = out.guards_intact("out");
  ASSERT_FALSE(result);
  const std::string text = result.message();
  EXPECT_NE(text.find("guard after it: 1 of 64 elements changed, at out[1000] (0 past the end)"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("guard before"), std::string::npos) << text;
  EXPECT_EQ(out.download(), std::vector<float>(1000, 2.0f));
}

TEST(GuardedOutput, AWriteBeforeAMisalignedStartIsReported) {
  // A front guard of 64 + 1 floats: data() is 4 bytes past a 256-byte boundary.
  course::testing::GuardedOutput<float> out(33, course::testing::GuardedOutput<float>::kGuard + 1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(out.data()) % 256, 4u);
  EXPECT_TRUE(course::testing::equal(course::testing::poison_values<float>(33), out.download()))
      << "a new GuardedOutput is poisoned";
  course_test::write_range(out.data(), -2, 33, 3.0f, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string text = out.guards_intact("out").message();
  EXPECT_NE(text.find("guard before it: 2 of 65 elements changed, at out[-1], out[-2]"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("guard after"), std::string::npos) << text;
}

}  // namespace
