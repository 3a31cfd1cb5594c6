// main() of every exercise's test binary.
//
// * No GPU: print why and exit 77, which Meson reports as SKIP rather than FAIL.
// * COURSE_LEAK_CHECK=1 (set by the grader's sanitizer stage for exercises with leak_check):
//   reset the device after the last case, so that compute-sanitizer's leak check, which runs
//   when a context is destroyed, reports every allocation the student's code never freed.
// * COURSE_EVENTS=path: a line of JSON per case start and end, flushed at once, and a last
//   "finished" line once every case has run. These lines are the grader's only source of
//   results: each carries the run's nonce (course/results.h), so lines the student's code
//   prints or writes cannot pass for them, and a process that dies mid-run leaves the name of
//   the case that was running. After a case that launched kernels not reported before, a
//   "launched" line names them (course/launch_record.h): the grader's technique rules count
//   only kernels a run launched. A failed case's "end" line lists its "failure_kinds" (the
//   grader's model.FailureKind): causes that the exercises graded beside it share (memory
//   running out, a leak check, which reads the device's free memory), so the grader runs such
//   a case again alone before it counts, without reading the messages' wording itself.
// * COURSE_CASE_LIMIT_S=seconds (set by the grader's tests stage from the manifest's
//   case_timeout_s): a case still running after that long is stopped: a "stopped" line names
//   it and the process ends at once (exit status 3). A kernel that never ends (launches from
//   the device that never stop) cannot be interrupted otherwise, and the cases after it could
//   not run on a GPU it keeps busy; this way the student learns which case, in seconds.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "course/json.h"
#include "course/launch_record.h"
#include "course/random.h"
#include "course/results.h"
#include "course/testing.h"

namespace {

constexpr int kStoppedExit = 3;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The failure kinds (grader/model.py, FailureKind) that a failure's message shows: the leak
// checks' own marker, and the words CUDA, the C++ library and the C library use for memory
// that ran out.
void add_failure_kinds(const std::string& message, std::set<std::string>& kinds) {
  const std::string said = lower(message);
  if (said.find(lower(course::testing::kDeviceMemoryLeaked)) != std::string::npos) {
    kinds.insert("device_memory_leaked");
  }
  const char* const out_of_memory_words[] = {
      cudaGetErrorString(cudaErrorMemoryAllocation), cudaGetErrorName(cudaErrorMemoryAllocation),
      "std::bad_alloc", std::strerror(ENOMEM)};
  for (const char* out_of_memory : out_of_memory_words) {
    if (out_of_memory != nullptr && said.find(lower(out_of_memory)) != std::string::npos) {
      kinds.insert("out_of_memory");
    }
  }
}

class EventStream : public ::testing::EmptyTestEventListener {
 public:
  EventStream(std::FILE* file, double case_limit_s) : file_(file), limit_s_(case_limit_s) {
    if (limit_s_ > 0) watchdog_ = std::thread([this] { watch(); });
  }
  ~EventStream() override {
    if (watchdog_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        closing_ = true;
      }
      wake_.notify_all();
      watchdog_.join();
    }
    std::fclose(file_);
  }

  void OnTestStart(const ::testing::TestInfo& info) override {
    failures_.clear();
    failure_kinds_.clear();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_ = full_name(info);
      deadline_ = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(limit_s_));
    }
    wake_.notify_all();
    course::JsonWriter line;
    line.begin_object()
        .field("event", "start")
        .field("case", full_name(info))
        .field("nonce", course::results_nonce())
        .end_object();
    write(line);
  }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::string where = result.file_name() != nullptr ? result.file_name() : "";
    where += ":" + std::to_string(result.line_number());
    failures_.push_back(where + "\n" + result.message());
    add_failure_kinds(result.message(), failure_kinds_);
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_.clear();
    }
    const auto* result = info.result();
    const char* status = result->Skipped() ? "skipped" : (result->Passed() ? "passed" : "failed");
    course::JsonWriter line;
    line.begin_object()
        .field("event", "end")
        .field("case", full_name(info))
        .field("status", status)
        .field("ms", static_cast<long long>(result->elapsed_time()))
        .field("nonce", course::results_nonce());
    line.key("failures").begin_array();
    for (const auto& failure : failures_) line.value(failure);
    line.end_array();
    line.key("failure_kinds").begin_array();
    for (const auto& kind : failure_kinds_) line.value(kind);
    line.end_array().end_object();
    write(line);
    report_launches();
  }
  void OnTestProgramEnd(const ::testing::UnitTest& unit) override {
    report_launches();
    course::JsonWriter line;
    line.begin_object()
        .field("event", "finished")
        .field("passed", unit.successful_test_count())
        .field("failed", unit.failed_test_count())
        .field("nonce", course::results_nonce())
        .end_object();
    write(line);
  }

 private:
  static std::string full_name(const ::testing::TestInfo& info) {
    return std::string(info.test_suite_name()) + "." + info.name();
  }
  void report_launches() {
    const std::vector<std::string> kernels = course::take_unreported_launches();
    if (kernels.empty()) return;
    course::JsonWriter line;
    line.begin_object().field("event", "launched").key("kernels").begin_array();
    for (const auto& kernel : kernels) line.value(kernel);
    line.end_array().field("nonce", course::results_nonce()).end_object();
    write(line);
  }
  // One event a line, flushed at once: the process may die right after it.
  void write(const course::JsonWriter& line) {
    std::lock_guard<std::mutex> lock(write_mutex_);
    std::fprintf(file_, "%s\n", line.str().c_str());
    std::fflush(file_);
  }
  // The watchdog: sleeps until the running case's deadline; past it, says which case and
  // ends the process (the case's own thread may be stuck in a CUDA call for ever).
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!closing_) {
      if (running_.empty()) {
        wake_.wait(lock);
        continue;
      }
      if (wake_.wait_until(lock, deadline_) == std::cv_status::no_timeout) continue;
      if (running_.empty() || std::chrono::steady_clock::now() < deadline_) continue;
      course::JsonWriter line;
      line.begin_object()
          .field("event", "stopped")
          .field("case", running_)
          .field("limit_s", limit_s_)
          .field("nonce", course::results_nonce())
          .end_object();
      write(line);
      std::fprintf(stderr, "stopped: %s did not finish within %g s\n", running_.c_str(),
                   limit_s_);
      std::fflush(stderr);
      std::_Exit(kStoppedExit);
    }
  }

  std::FILE* file_;
  std::vector<std::string> failures_;
  std::set<std::string> failure_kinds_;
  double limit_s_;
  std::mutex write_mutex_;
  std::mutex mutex_;  // guards running_, deadline_, closing_
  std::condition_variable wake_;
  std::string running_;
  std::chrono::steady_clock::time_point deadline_{};
  bool closing_ = false;
  std::thread watchdog_;
};

}  // namespace

int main(int argc, char** argv) {
  // Modules load when the program starts, not at a kernel's first launch: a lazy load can wait
  // for the whole device, and so for a stream held shut by a course::StreamGate.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  ::testing::InitGoogleTest(&argc, argv);
  if (::testing::GTEST_FLAG(list_tests)) return RUN_ALL_TESTS();

  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device here (%s); these tests need a GPU.\n",
                status != cudaSuccess ? cudaGetErrorName(status) : "0 devices");
    return 77;
  }

  const std::uint64_t seed = course::run_seed();
  std::printf("course seed: %llu (rerun with COURSE_SEED=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  ::testing::Test::RecordProperty("seed", std::to_string(seed));

  if (const char* path = std::getenv("COURSE_EVENTS")) {
    if (std::FILE* file = std::fopen(path, "w")) {
      const char* limit = std::getenv("COURSE_CASE_LIMIT_S");
      ::testing::UnitTest::GetInstance()->listeners().Append(
          new EventStream(file, limit != nullptr ? std::atof(limit) : 0.0));
    } else {
      std::fprintf(stderr, "cannot write COURSE_EVENTS=%s\n", path);
    }
  }
  const int result = RUN_ALL_TESTS();
  if (const char* leak = std::getenv("COURSE_LEAK_CHECK"); leak != nullptr && *leak == '1') {
    cudaDeviceReset();
  }
  return result;
}
