#include "occupancy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "course/device.h"
#include "course/testing.h"

namespace {

using course::testing::GuardedInput;

// The runtime's own answer: resident blocks per SM times warps per block, over the SM's warps.
double runtime_occupancy(const void* kernel, int block_size, std::size_t smem) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block_size, smem));
  const int warps_per_block = (block_size + prop.warpSize - 1) / prop.warpSize;
  return static_cast<double>(blocks * warps_per_block) /
         (prop.maxThreadsPerMultiProcessor / prop.warpSize);
}

const char* kernel_name(OccupancyKernel which) {
  switch (which) {
    case OccupancyKernel::kLight: return "light";
    case OccupancyKernel::kRegisterHeavy: return "register_heavy";
    case OccupancyKernel::kSharedHeavy: return "shared_heavy";
  }
  return "?";
}

void check_occupancy(OccupancyKernel which) {
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, occupancy_kernel(which)));
  int checked = 0;
  for (const int block : {1, 32, 33, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024}) {
    if (block > attributes.maxThreadsPerBlock) continue;
    for (const std::size_t smem : {std::size_t{0}, std::size_t{4096}, std::size_t{8192}}) {
      const double expected = runtime_occupancy(occupancy_kernel(which), block, smem);
      const double got = theoretical_occupancy(which, block, smem);
      EXPECT_NEAR(got, expected, 1e-9)
          << kernel_name(which) << " kernel, block_size " << block << ", " << smem
          << " bytes of dynamic shared memory (" << attributes.numRegs << " registers per thread, "
          << attributes.sharedSizeBytes << " bytes of static shared memory)";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(TheoreticalOccupancy, LightKernel) { check_occupancy(OccupancyKernel::kLight); }
TEST(TheoreticalOccupancy, RegisterHeavyKernel) {
  check_occupancy(OccupancyKernel::kRegisterHeavy);
}
TEST(TheoreticalOccupancy, SharedHeavyKernel) { check_occupancy(OccupancyKernel::kSharedHeavy); }

// Runs streaming_scale with the chosen configuration and checks every element.
LaunchConfig check_config_runs(int n) {
  const LaunchConfig config = choose_launch_config(n);
  EXPECT_GE(config.grid, 1) << "n = " << n;
  EXPECT_GE(config.block, 32) << "n = " << n;
  EXPECT_LE(config.block, 1024) << "n = " << n;
  EXPECT_EQ(config.block % 32, 0) << "n = " << n << ": a block size that is not a multiple of "
                                  << "32 leaves a partly empty warp in every block";
  if (config.grid < 1 || config.block < 1 || config.block > 1024) return config;
  auto rng = course::testing::case_rng();
  const auto x_host = course::random_floats(n, -1000.f, 1000.f, rng);
  GuardedInput<float> x(x_host);
  auto y = course::testing::poisoned_output<float>(n);
  streaming_scale(config, x.data(), y.data(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = 2.0f * x_host[i] + 1.0f;
  EXPECT_TRUE(course::testing::equal(expected, y.download(), {{}, "y"}));
  return config;
}

TEST(LaunchConfig, SmallInputsRunWithoutIdleBlocks) {
  for (const int n : {1, 31, 33, 1000, 4097}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const LaunchConfig config = check_config_runs(n);
    // Blocks beyond ceil(n / block) would only find nothing to do.
    EXPECT_LE(static_cast<long long>(config.grid - 1) * config.block, n - 1)
        << "grid " << config.grid << " x block " << config.block << " for n = " << n;
  }
}

TEST(LaunchConfig, LargeInputsFillEverySm) {
  int device = 0;
  int threads_per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                    device));
  const int sms = course::sm_count();
  // "Large" relative to this device, not to the GPUs of today: at least 16 elements for every
  // thread it can hold resident (2^24 + 3 wherever that is more, as on an H100 or an H200), so
  // a configuration that fills the GPU is always one the input needs.
  const int n = static_cast<int>(std::max<std::size_t>(
      (std::size_t{1} << 24) + 3, course::testing::elements_beyond_residency(16)));
  const LaunchConfig config = check_config_runs(n);
  EXPECT_GE(config.grid, sms) << "a grid smaller than the number of SMs leaves SMs idle";
  const double occupancy = runtime_occupancy(streaming_scale_kernel(), config.block, 0);
  EXPECT_GE(occupancy, 0.5) << "block size " << config.block << " gives streaming_scale a "
                            << "theoretical occupancy of " << occupancy;
  // At least half the threads the GPU can hold at that occupancy.
  EXPECT_GE(static_cast<double>(config.grid) * config.block,
            0.5 * occupancy * sms * threads_per_sm)
      << "grid " << config.grid << " x block " << config.block << " cannot fill the GPU";
}

}  // namespace
