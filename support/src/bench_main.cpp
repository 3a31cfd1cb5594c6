// main() of every exercise's benchmark binary: the exercise defines course::run_benchmark.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "course/bench.h"

int main(int argc, char** argv) {
  // Modules load when the program starts, not at a kernel's first launch: a lazy load can wait
  // for the whole device, and so for a stream held shut by a course::StreamGate.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  const char* slash = std::strrchr(argv[0], '/');
  const std::string title = slash != nullptr ? slash + 1 : argv[0];
  try {
    course::Benchmark bench(argc, argv, title);
    try {
      course::run_benchmark(bench);
    } catch (const std::exception& error) {
      bench.fail(error.what());
    }
    return bench.finish();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: benchmark could not start: %s\n", title.c_str(), error.what());
    return 1;
  }
}
