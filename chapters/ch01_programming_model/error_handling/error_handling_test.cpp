#include "error_handling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "course/testing.h"

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
// A leak smaller than this could hide in the driver's page rounding; every case that checks
// for leaks uses buffers far larger (64 MiB and up), so a real leak always shows.
constexpr std::size_t kLeakSlack = 4 * kMiB;
// Buffers this large make a leaked allocation visible to cudaMemGetInfo.
constexpr std::size_t kLeakVisibleN = (std::size_t{16} << 20) + 5;

::testing::AssertionResult returned(cudaError_t expected, cudaError_t actual) {
  if (expected == actual) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "scale_on_device returned " << cudaGetErrorName(actual)
                                       << " (" << cudaGetErrorString(actual) << "), expected "
                                       << cudaGetErrorName(expected);
}

// For an over-sized block the runtime's own answer depends on the toolkit: CUDA 13 on an
// H200 gives cudaErrorInvalidValue where older ones gave cudaErrorInvalidConfiguration.
::testing::AssertionResult returned_launch_error(cudaError_t actual) {
  if (actual == cudaErrorInvalidConfiguration || actual == cudaErrorInvalidValue)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "scale_on_device returned " << cudaGetErrorName(actual)
                                       << " (" << cudaGetErrorString(actual) << "), expected "
                                       << "the launch's error (cudaErrorInvalidConfiguration "
                                       << "or cudaErrorInvalidValue)";
}

// cudaGetLastError both reads and clears, so a failure here does not spill into later cases.
::testing::AssertionResult no_error_pending() {
  const cudaError_t pending = cudaGetLastError();
  if (pending == cudaSuccess) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "an error was left pending after scale_on_device returned: cudaGetLastError() gave "
         << cudaGetErrorName(pending) << "; clear it before returning so the next caller does "
         << "not inherit it";
}

constexpr char kFreeOnErrorPaths[] = "free every buffer on error paths";

std::vector<float> nan_filled(std::size_t n) {
  return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN());
}

// A valid call: must return cudaSuccess, leave no error pending and produce factor * x.
void check_valid_call(std::size_t n, int threads_per_block) {
  auto rng = course::testing::case_rng();
  const auto input = course::random_floats(n, -1000.f, 1000.f, rng);
  const float factor = course::random_floats(1, -4.f, 4.f, rng)[0];
  const auto pristine = input;
  auto output = nan_filled(n);

  EXPECT_TRUE(returned(cudaSuccess,
                       scale_on_device(input.data(), output.data(), n, factor, threads_per_block)))
      << "n = " << n << ", threads_per_block = " << threads_per_block;
  EXPECT_TRUE(no_error_pending());

  std::vector<float> expected(n);
  for (std::size_t i = 0; i < n; ++i) expected[i] = factor * input[i];
  EXPECT_TRUE(course::testing::equal(expected, output, {{}, "host_out"}));
  EXPECT_TRUE(course::testing::equal(pristine, input, {{}, "host_in (must not be modified)"}));
}

// Loads the kernel and settles the context, so later free-memory readings compare like with
// like; it is also a valid call, so it has to work.
void warm_up() { check_valid_call(1000, 128); }

using ValidParam = std::tuple<std::size_t, int>;  // n, threads_per_block
class ScaleOnDevice : public ::testing::TestWithParam<ValidParam> {};

TEST_P(ScaleOnDevice, ValidCallMatchesReference) {
  check_valid_call(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

std::string valid_name(const ::testing::TestParamInfo<ValidParam>& info) {
  return "n_" + std::to_string(std::get<0>(info.param)) + "_threads_" +
         std::to_string(std::get<1>(info.param));
}

// n not a multiple of the block (the last block is partly idle), blocks that are not a
// multiple of a warp, the 1024-thread limit itself, and a single thread per block.
INSTANTIATE_TEST_SUITE_P(Small, ScaleOnDevice,
                         ::testing::Values(ValidParam{1, 1}, ValidParam{7, 32},
                                           ValidParam{31, 32}, ValidParam{33, 32},
                                           ValidParam{257, 256}, ValidParam{1000, 1000},
                                           ValidParam{65537, 1024}, ValidParam{65537, 33},
                                           ValidParam{4099, 1}),
                         valid_name);
INSTANTIATE_TEST_SUITE_P(Large, ScaleOnDevice,
                         ::testing::Values(ValidParam{(std::size_t{1} << 24) + 3, 256},
                                           ValidParam{(std::size_t{1} << 22) + 1, 1}),
                         valid_name);

class InvalidBlockSize : public ::testing::TestWithParam<int> {};

TEST_P(InvalidBlockSize, ReturnsTheErrorThenRecovers) {
  warm_up();
  const int threads_per_block = GetParam();
  auto rng = course::testing::case_rng();
  const auto input = course::random_floats(kLeakVisibleN, -1.f, 1.f, rng);
  auto output = nan_filled(kLeakVisibleN);

  const course::testing::DeviceMemoryWatch memory(kLeakSlack);
  const cudaError_t status =
      scale_on_device(input.data(), output.data(), kLeakVisibleN, 2.f, threads_per_block);
  if (threads_per_block <= 0) {
    EXPECT_TRUE(returned(cudaErrorInvalidConfiguration, status))
        << "threads_per_block = " << threads_per_block;
  } else {
    EXPECT_TRUE(returned_launch_error(status)) << "threads_per_block = " << threads_per_block;
  }
  EXPECT_TRUE(no_error_pending());
  EXPECT_TRUE(memory.nothing_leaked(kFreeOnErrorPaths));

  // The failure must not poison the device for the next caller.
  check_valid_call(4097, 128);
}

std::string block_size_name(const ::testing::TestParamInfo<int>& info) {
  return info.param < 0 ? "minus_" + std::to_string(-info.param) : std::to_string(info.param);
}

// Just over the 1024-thread limit, far over it, and sizes that are not sizes at all.
INSTANTIATE_TEST_SUITE_P(Errors, InvalidBlockSize, ::testing::Values(1025, 2048, 0, -1, -256),
                         block_size_name);

TEST(ErrorHandling, ZeroElementsSucceedsWithoutTouchingAnythingThenWorks) {
  // n = 0 is a valid, empty request; launching a zero-block grid for it would be an error.
  warm_up();
  auto rng = course::testing::case_rng();
  const auto input = course::random_floats(64, -1.f, 1.f, rng);
  auto output = nan_filled(64);
  EXPECT_TRUE(returned(cudaSuccess, scale_on_device(input.data(), output.data(), 0, 3.f, 256)));
  EXPECT_TRUE(no_error_pending());
  bool untouched = true;
  for (float value : output) untouched = untouched && std::isnan(value);
  EXPECT_TRUE(untouched) << "host_out was written although n = 0";
  check_valid_call(33, 32);
}

TEST(ErrorHandling, AllocationLargerThanTheGpuFailsCleanlyThenRecovers) {
  warm_up();
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // A gigabyte more than the whole GPU holds: the very first cudaMalloc has to fail. The host
  // arrays are small on purpose; correct code never reads them once an allocation failed.
  const std::size_t n = (total_bytes + 1024 * kMiB) / sizeof(float);
  std::vector<float> input(1024, 1.f), output(1024, 0.f);

  const course::testing::DeviceMemoryWatch memory(kLeakSlack);
  EXPECT_TRUE(returned(cudaErrorMemoryAllocation,
                       scale_on_device(input.data(), output.data(), n, 2.f, 256)))
      << "n = " << n << " floats, " << (n * sizeof(float)) / kMiB << " MiB, on a GPU of "
      << total_bytes / kMiB << " MiB";
  EXPECT_TRUE(no_error_pending());
  EXPECT_TRUE(memory.nothing_leaked(kFreeOnErrorPaths));
  check_valid_call(65537, 256);
}

// Device memory the test holds on to so that only a little is left for the call under test.
struct DeviceBallast {
  void* pointer = nullptr;
  DeviceBallast() = default;
  DeviceBallast(const DeviceBallast&) = delete;
  DeviceBallast& operator=(const DeviceBallast&) = delete;
  ~DeviceBallast() { release(); }
  void release() {
    if (pointer != nullptr) cudaFree(pointer);
    pointer = nullptr;
  }
};

TEST(ErrorHandling, SecondAllocationFailsAndTheFirstIsFreed) {
  warm_up();
  // Occupy the GPU until about 512 MiB are left, then ask for two buffers of 60 % of what is
  // free each: the first fits, the second cannot, and the first must be released.
  DeviceBallast ballast;
  const std::size_t free_bytes = course::testing::free_device_bytes();
  for (std::size_t keep = 512 * kMiB; free_bytes > keep && keep < 8192 * kMiB; keep *= 2) {
    const std::size_t take = ((free_bytes - keep) / (2 * kMiB)) * (2 * kMiB);
    if (cudaMalloc(&ballast.pointer, take) == cudaSuccess) break;
    ballast.pointer = nullptr;
    (void)cudaGetLastError();  // the test's own failed attempt must not count against the call
  }
  const course::testing::DeviceMemoryWatch memory(kLeakSlack);
  const std::size_t free_before = memory.free_before();
  ASSERT_LE(free_before, 8192 * kMiB) << "the test could not occupy the GPU's memory";
  const std::size_t n = (free_before / 10 * 6) / sizeof(float);
  // Contents are irrelevant (correct code fails before copying), so plain zeroed arrays.
  std::vector<float> input(n), output(n);

  EXPECT_TRUE(returned(cudaErrorMemoryAllocation,
                       scale_on_device(input.data(), output.data(), n, 2.f, 256)))
      << "with " << free_before / kMiB << " MiB free, two buffers of " << n * sizeof(float) / kMiB
      << " MiB each do not fit";
  EXPECT_TRUE(no_error_pending());
  EXPECT_TRUE(memory.nothing_leaked(kFreeOnErrorPaths));

  ballast.release();
  check_valid_call(1 << 20, 512);
}

}  // namespace
