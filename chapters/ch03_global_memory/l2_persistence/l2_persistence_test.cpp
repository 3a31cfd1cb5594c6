#include "l2_persistence.h"
#include "l2_persistence_baseline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "course/device_random.h"
#include "course/testing.h"

namespace {

struct Limits {
  std::size_t max_persist;
  std::size_t max_window;
};

Limits limits() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  int persist = 0;
  int window = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&persist, cudaDevAttrMaxPersistingL2CacheSize, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&window, cudaDevAttrMaxAccessPolicyWindowSize, device));
  return {static_cast<std::size_t>(persist), static_cast<std::size_t>(window)};
}

cudaAccessPolicyWindow window_of(cudaStream_t stream) {
  cudaStreamAttrValue value{};
  CUDA_CHECK(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
  return value.accessPolicyWindow;
}

std::size_t set_aside() {
  std::size_t bytes = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize));
  return bytes;
}

// Leaves the device as the next case expects it, whatever the code under test did.
void course_reset(cudaStream_t stream) {
  cudaStreamAttrValue value{};
  CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
  CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
}

void check_window(std::size_t hot_bytes) {
  const Limits lim = limits();
  ASSERT_GT(lim.max_persist, 0u) << "this GPU reports no persisting L2 capacity";
  course::DeviceBuffer<char> hot(hot_bytes);
  course::Stream stream;
  enable_persistence(stream, hot.data(), hot_bytes);
  const cudaAccessPolicyWindow w = window_of(stream);
  const std::size_t reserved = set_aside();
  course_reset(stream);

  EXPECT_EQ(w.base_ptr, static_cast<void*>(hot.data())) << "window base_ptr";
  EXPECT_EQ(w.num_bytes, std::min(hot_bytes, lim.max_window))
      << "num_bytes must cover the hot region, capped at accessPolicyMaxWindowSize";
  EXPECT_EQ(w.hitProp, cudaAccessPropertyPersisting) << "hitProp";
  EXPECT_EQ(w.missProp, cudaAccessPropertyStreaming) << "missProp";
  EXPECT_GT(w.hitRatio, 0.0f) << "hitRatio";
  EXPECT_LE(w.hitRatio, 1.0f) << "hitRatio";
  if (reserved > 0) {
    // Persisting more than the set-aside holds makes the lines evict each other.
    EXPECT_LE(w.hitRatio * static_cast<double>(w.num_bytes), 1.01 * reserved)
        << "hitRatio * num_bytes exceeds the set-aside of " << reserved << " bytes";
  }
}

TEST(L2Persistence, WindowCoversASmallHotRegion) { check_window(std::size_t{1} << 20); }

TEST(L2Persistence, WindowForARegionLargerThanTheSetAside) {
  const Limits lim = limits();
  ASSERT_GT(lim.max_persist, 0u);
  // An odd size a little over twice the largest set-aside: hitRatio must scale down.
  check_window(2 * lim.max_persist + 4096 + 12);
}

TEST(L2Persistence, DisableResetsWindowAndSetAside) {
  course::DeviceBuffer<char> hot(std::size_t{4} << 20);
  course::Stream stream;
  enable_persistence(stream, hot.data(), hot.bytes());
  const bool enabled = window_of(stream).num_bytes > 0;
  disable_persistence(stream);
  const cudaAccessPolicyWindow w = window_of(stream);
  const std::size_t reserved = set_aside();
  course_reset(stream);
  EXPECT_TRUE(enabled) << "enable_persistence set no window, so there was nothing to reset";
  EXPECT_EQ(w.num_bytes, 0u) << "the stream still has an access policy window";
  EXPECT_EQ(reserved, 0u) << "cudaLimitPersistingL2CacheSize was left at " << reserved;
}

TEST(L2Persistence, WorkloadResultUnchangedByTheWindow) {
  // The window is a hint: results must be identical with and without it, and disable must
  // wait for the work queued before it.
  const std::size_t n_hot = (std::size_t{1} << 18) + 7;
  // An odd stream length, so the last step is partial.
  const std::size_t n_big = 3 * (n_hot / 8) * 4 + 13;
  const int loads = 4;
  const int blocks = 64;
  course::DeviceBuffer<float> hot(n_hot), big(4 * n_big), a(blocks), b(blocks);
  auto rng = course::testing::case_rng();
  course::fill_hashed(hot.data(), hot.size(), rng(), nullptr);
  course::fill_hashed(big.data(), big.size(), rng(), nullptr);
  a.fill_bytes(course::kPoisonByte);
  b.fill_bytes(course::kPoisonByte);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto* big4 = reinterpret_cast<const float4*>(big.data());
  course::Stream stream;
  hot_stream_sum(big4, n_big, hot.data(), n_hot, loads, 2, a.data(), blocks, stream);
  stream.synchronize();
  enable_persistence(stream, hot.data(), hot.bytes());
  const bool enabled = window_of(stream).num_bytes > 0;
  hot_stream_sum(big4, n_big, hot.data(), n_hot, loads, 2, b.data(), blocks, stream);
  disable_persistence(stream);
  // No synchronisation here: disable_persistence must already have waited.
  std::vector<float> got(blocks);
  CUDA_CHECK(cudaMemcpyAsync(got.data(), b.data(), blocks * sizeof(float), cudaMemcpyDeviceToHost,
                             stream));
  stream.synchronize();
  const std::size_t reserved = set_aside();
  course_reset(stream);
  EXPECT_TRUE(enabled) << "enable_persistence set no window on the stream";
  EXPECT_TRUE(course::testing::equal(a.download(), got, {{}, "partial sums with the window"}));
  EXPECT_EQ(reserved, 0u) << "cudaLimitPersistingL2CacheSize was left at " << reserved;
}

}  // namespace
