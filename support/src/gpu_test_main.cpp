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
//   the case that was running.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "course/json.h"
#include "course/random.h"
#include "course/results.h"

namespace {

class EventStream : public ::testing::EmptyTestEventListener {
 public:
  explicit EventStream(std::FILE* file) : file_(file) {}
  ~EventStream() override { std::fclose(file_); }

  void OnTestStart(const ::testing::TestInfo& info) override {
    failures_.clear();
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
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
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
    line.end_array().end_object();
    write(line);
  }
  void OnTestProgramEnd(const ::testing::UnitTest& unit) override {
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
  // One event a line, flushed at once: the process may die right after it.
  void write(const course::JsonWriter& line) {
    std::fprintf(file_, "%s\n", line.str().c_str());
    std::fflush(file_);
  }
  std::FILE* file_;
  std::vector<std::string> failures_;
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
      ::testing::UnitTest::GetInstance()->listeners().Append(new EventStream(file));
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
