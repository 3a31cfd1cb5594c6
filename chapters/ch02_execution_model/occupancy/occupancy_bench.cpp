// streaming_scale on 2^25 floats with the configuration choose_launch_config picks, against a
// sweep of block sizes and grids (sweep_b<block>_<grid rule>) measured in the same run; the
// fastest configuration of the sweep is timed again as sweep_best.
#include "occupancy.h"

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/random.h"

void course::run_benchmark(course::Benchmark& bench) {
  const int n = 1 << 25;  // 128 MiB in, 128 MiB out
  const double bytes = 2.0 * sizeof(float) * n;
  auto rng = course::make_rng("occupancy_bench");
  const auto x_host = course::random_floats(n, -1000.f, 1000.f, rng);
  std::vector<float> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = 2.0f * x_host[i] + 1.0f;
  course::DeviceBuffer<float> x(x_host), y(n), expected_y(expected);
  const course::TimedIo writes_y{{course::exact_output(y, "y")}};

  const int sms = bench.device().multiProcessorCount;
  struct Candidate {
    std::string name;
    LaunchConfig config;
    double rate;
  };
  std::vector<Candidate> sweep;
  for (const int block : {32, 64, 128, 256, 512, 1024}) {
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, streaming_scale_kernel(),
                                                             block, 0));
    const int one_wave = per_sm * sms;
    const std::vector<std::pair<std::string, int>> grids = {
        {"one_block_per_sm", sms},
        {"one_wave", one_wave},
        {"four_waves", 4 * one_wave},
        {"one_block_per_256_elements", (n + 255) / 256}};
    for (const auto& [rule, grid] : grids) {
      const std::string name = "sweep_b" + std::to_string(block) + "_" + rule;
      const LaunchConfig config{grid, block};
      y.fill_bytes(course::kPoisonByte);
      auto& m = bench.time(
          name, bytes, course::Unit::GBps,
          [&](cudaStream_t s) { streaming_scale(config, x.data(), y.data(), n, s); }, writes_y);
      bench.check_on_device(name, expected_y, y, {{}, "y"});
      if (m.valid) sweep.push_back({name, config, m.rate});
    }
  }
  if (sweep.empty()) {
    bench.fail("no configuration of the sweep produced a valid measurement");
    return;
  }
  const Candidate* best = &sweep.front();
  for (const auto& c : sweep)
    if (c.rate > best->rate) best = &c;
  const LaunchConfig best_config = best->config;
  y.fill_bytes(course::kPoisonByte);
  bench.time(
      "sweep_best", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { streaming_scale(best_config, x.data(), y.data(), n, s); }, writes_y);
  bench.check_on_device("sweep_best", expected_y, y, {{}, "y"});

  LaunchConfig chosen;
  try {
    chosen = choose_launch_config(n);
  } catch (const std::exception& error) {
    bench.fail(std::string("choose_launch_config threw: ") + error.what());
    return;
  }
  y.fill_bytes(course::kPoisonByte);
  bench.time(
      "chosen_config", bytes, course::Unit::GBps,
      [&](cudaStream_t s) { streaming_scale(chosen, x.data(), y.data(), n, s); }, writes_y);
  bench.check_on_device("chosen_config", expected_y, y, {{}, "y"});
}
