// Error checking for CUDA runtime calls and kernel launches.
//
// CUDA_CHECK(expr) throws course::CudaError naming the failing expression, the file, the line
// and the error's name, so a test fails with a message a student can act on instead of
// carrying on with garbage. CUDA_CHECK_LAUNCH() goes after every <<<...>>>: launch errors
// (a bad configuration, too much shared memory) are only visible through cudaGetLastError.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace course {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* expression, const char* file, int line);
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expression, const char* file,
                                   int line);

// Checks cudaGetLastError(); when the environment sets COURSE_SYNC_LAUNCHES=1 it also waits
// for the kernel, so an error raised while it runs is reported at its launch site.
void check_launch(const char* file, int line);

}  // namespace course

#define CUDA_CHECK(expr)                                                     \
  do {                                                                       \
    const cudaError_t course_status_ = (expr);                               \
    if (course_status_ != cudaSuccess)                                       \
      ::course::throw_cuda_error(course_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define CUDA_CHECK_LAUNCH() ::course::check_launch(__FILE__, __LINE__)
