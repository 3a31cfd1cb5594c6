#include "course/check.h"

#include <cstdlib>
#include <cstring>

namespace course {

namespace {

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

// "cudaErrorInvalidValue (invalid argument) in `cudaMalloc(&p, n)` at file.cu:12"
std::string describe_cuda_error(cudaError_t code, const char* expression, const char* file,
                                int line) {
  std::string text = cudaGetErrorName(code);
  text += " (";
  text += cudaGetErrorString(code);
  text += ") in `";
  text += expression;
  text += "` at ";
  text += base_name(file);
  text += ":";
  text += std::to_string(line);
  return text;
}

}  // namespace

CudaError::CudaError(cudaError_t code, const char* expression, const char* file, int line)
    : std::runtime_error(describe_cuda_error(code, expression, file, line)), code_(code) {}

void throw_cuda_error(cudaError_t code, const char* expression, const char* file, int line) {
  throw CudaError(code, expression, file, line);
}

void check_launch(const char* file, int line) {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) throw CudaError(launch, "kernel launch", file, line);
  static const bool sync = [] {
    const char* value = std::getenv("COURSE_SYNC_LAUNCHES");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  if (sync) {
    const cudaError_t run = cudaDeviceSynchronize();
    if (run != cudaSuccess) throw CudaError(run, "kernel execution", file, line);
  }
}

}  // namespace course
