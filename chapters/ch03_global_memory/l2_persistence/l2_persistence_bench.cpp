// The course's hot + streaming workload with and without the student's window, same run.
//
// Hot region: 3/4 of the largest window the device allows a set-aside for, so the persisting
// lines fit the set-aside with room to spare. It is read as scattered 32-byte sectors, one
// float each, so a miss costs a random DRAM access that no coalescing or prefetch hides, while
// a hit costs an L2 access. Stream: a big array of over 1 GiB read once per sweep; between two
// reads of the same hot sector at least three L2s of it go through the cache, so without a
// window the hot lines are evicted and every gather misses. Enough sweeps that one run takes
// about 10 ms, so the enable/disable calls (set-aside, window, synchronisation) are noise.
//
// Both measurements make the same calls around the same kernel; the baseline's window is
// cudaAccessPropertyNormal, which by definition does nothing, so only the hit property differs.
// Every call's partial sums are checked. Both calls wait for their stream (disabling the window
// is not stream-ordered), so the check that holds the stream shut does not apply.
// Rates count the bytes the kernel asks for (stream plus 4 bytes per gather), the same for both.
#include "l2_persistence.h"
#include "l2_persistence_baseline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/device_random.h"
#include "course/random.h"

namespace {

constexpr double kHotFraction = 0.75;  // of min(persisting max, window max)
constexpr double kRoundL2s = 3.0;      // stream between two reads of one hot sector, in L2s
constexpr std::size_t kMinStreamBytes = std::size_t{1} << 30;
constexpr double kStreamBytesPerRun = 32.0 * (1u << 30);  // ~8-12 ms at H200 bandwidth

// What enable_persistence does, with hitProp = Normal: the same API calls and costs, no effect.
void enable_normal_window(cudaStream_t stream, const void* hot, std::size_t hot_bytes,
                          std::size_t max_persist, std::size_t max_window) {
  const std::size_t set_aside = std::min(hot_bytes, max_persist);
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = const_cast<void*>(hot);
  value.accessPolicyWindow.num_bytes = std::min(hot_bytes, max_window);
  value.accessPolicyWindow.hitRatio = 1.0f;
  value.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
  value.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
  CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
}

// What disable_persistence does.
void disable_window(cudaStream_t stream) {
  CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaStreamAttrValue value{};
  CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
  CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
}

}  // namespace

void course::run_benchmark(course::Benchmark& bench) {
  const auto& prop = bench.device();
  const std::size_t max_persist = static_cast<std::size_t>(prop.persistingL2CacheMaxSize);
  const std::size_t max_window = static_cast<std::size_t>(prop.accessPolicyMaxWindowSize);
  if (max_persist == 0 || max_window == 0) {
    bench.require("persisting_l2_available", false, "this GPU has no persisting L2");
    return;
  }
  const std::size_t l2 = static_cast<std::size_t>(prop.l2CacheSize);
  const double limit = static_cast<double>(std::min(max_persist, max_window));
  const std::size_t hot_bytes = static_cast<std::size_t>(kHotFraction * limit) / 4096 * 4096;
  const std::size_t n_hot = hot_bytes / sizeof(float);
  // One round (every hot sector gathered once) streams hot_bytes * loads / 2 bytes.
  const int loads = std::clamp(
      static_cast<int>(std::ceil(2.0 * kRoundL2s * static_cast<double>(l2) /
                                 static_cast<double>(hot_bytes))),
      8, 64);
  const int blocks = prop.multiProcessorCount * 8;
  const std::size_t threads = static_cast<std::size_t>(blocks) * 256;
  const std::size_t per_step = threads * static_cast<std::size_t>(loads);  // float4 per step
  // Whole steps, so every thread does the same work in every step.
  const std::size_t steps = (kMinStreamBytes / sizeof(float4) + per_step - 1) / per_step;
  const std::size_t n_big = steps * per_step;
  const double big_bytes = static_cast<double>(n_big * sizeof(float4));
  const int sweeps = std::max(2, static_cast<int>(std::ceil(kStreamBytesPerRun / big_bytes)));
  const double bytes =
      sweeps * (big_bytes + static_cast<double>(steps * threads * sizeof(float)));

  course::DeviceBuffer<float> hot(n_hot), big(4 * n_big), plain(blocks), windowed(blocks);
  auto rng = course::make_rng("l2_persistence_bench");
  course::fill_hashed(hot.data(), hot.size(), rng(), nullptr);
  course::fill_hashed(big.data(), big.size(), rng(), nullptr);
  plain.fill_bytes(course::kPoisonByte);
  windowed.fill_bytes(course::kPoisonByte);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto* big4 = reinterpret_cast<const float4*>(big.data());
  std::printf("hot %.1f MiB (L2 %.1f MiB, set-aside max %.1f MiB), stream %.2f GiB x %d sweeps, "
              "%d float4 per gather (%.1f L2s of stream between reuses)\n",
              hot_bytes / 1048576.0, l2 / 1048576.0, max_persist / 1048576.0,
              big_bytes / 1073741824.0, sweeps, loads, hot_bytes * loads / 2.0 / l2);

  const bool waits_for_stream = true;
  bench.time(
      "without_window", bytes, course::Unit::GBps,
      [&](cudaStream_t s) {
        enable_normal_window(s, hot.data(), hot_bytes, max_persist, max_window);
        hot_stream_sum(big4, n_big, hot.data(), n_hot, loads, sweeps, plain.data(), blocks, s);
        disable_window(s);
      },
      course::TimedIo{{course::exact_output(plain, "partial sums")}, {}, waits_for_stream});
  bench.time(
      "with_window", bytes, course::Unit::GBps,
      [&](cudaStream_t s) {
        enable_persistence(s, hot.data(), hot_bytes);
        hot_stream_sum(big4, n_big, hot.data(), n_hot, loads, sweeps, windowed.data(), blocks,
                       s);
        disable_persistence(s);
      },
      course::TimedIo{{course::exact_output(windowed, "partial sums")}, {}, waits_for_stream});
  // Every run computes the same sums, so the check does not depend on the repeat count.
  bench.check("with_window", course::compare_exact(plain.download(), windowed.download(),
                                                   {{}, "partial sums"}));

  // What the student's disable_persistence left behind on the benchmark's stream. (Benchmark
  // would reset it before the next measurement anyway; this checks the student did.)
  cudaStreamAttrValue value{};
  CUDA_CHECK(cudaStreamGetAttribute(bench.stream(), cudaStreamAttributeAccessPolicyWindow, &value));
  std::size_t reserved = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&reserved, cudaLimitPersistingL2CacheSize));
  bench.require("window_removed", value.accessPolicyWindow.num_bytes == 0,
                "disable_persistence left an access policy window of " +
                    std::to_string(value.accessPolicyWindow.num_bytes) + " bytes on the stream");
  bench.require("set_aside_released", reserved == 0,
                "disable_persistence left cudaLimitPersistingL2CacheSize at " +
                    std::to_string(reserved) + " bytes");
}
