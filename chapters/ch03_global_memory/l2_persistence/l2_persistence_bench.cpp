// The course's hot + streaming workload with and without the student's window, same run.
// Hot region: the largest set-aside the device allows (capped by the window size). Big array:
// 12 passes of one float2 per hot float, so between two reads of a hot line three times the
// hot size goes through L2; the whole thing is swept 3 times. Rates count the bytes the kernel
// asks for (big plus every hot read), the same for both measurements.
#include "l2_persistence.h"

#include <algorithm>
#include <string>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  const auto& prop = bench.device();
  const std::size_t max_persist = static_cast<std::size_t>(prop.persistingL2CacheMaxSize);
  const std::size_t max_window = static_cast<std::size_t>(prop.accessPolicyMaxWindowSize);
  if (max_persist == 0 || max_window == 0) {
    bench.require("persisting_l2_available", false, "this GPU has no persisting L2");
    return;
  }
  const std::size_t hot_bytes = std::min(max_persist, max_window) / 4096 * 4096;
  const std::size_t n_hot = hot_bytes / sizeof(float);
  const int passes = 12;
  const int sweeps = 3;
  const int blocks = prop.multiProcessorCount * 8;
  const double bytes =
      static_cast<double>(sweeps) * passes * n_hot * (sizeof(float2) + sizeof(float));

  course::DeviceBuffer<float> hot(n_hot), big(2 * n_hot * passes), plain(blocks), windowed(blocks);
  auto rng = course::make_rng("l2_persistence_bench");
  fill_hash(hot.data(), hot.size(), rng(), nullptr);
  fill_hash(big.data(), big.size(), rng(), nullptr);
  plain.fill_bytes(course::kPoisonByte);
  windowed.fill_bytes(course::kPoisonByte);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto* big2 = reinterpret_cast<const float2*>(big.data());

  bench.time("without_window", bytes, course::Unit::GBps, [&](cudaStream_t s) {
    hot_stream_sum(big2, hot.data(), n_hot, passes, sweeps, plain.data(), blocks, s);
  });
  bench.time("with_window", bytes, course::Unit::GBps, [&](cudaStream_t s) {
    enable_persistence(s, hot.data(), hot_bytes);
    hot_stream_sum(big2, hot.data(), n_hot, passes, sweeps, windowed.data(), blocks, s);
    disable_persistence(s);
  });
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
