// The reduction ladder's benchmark input and the timing of launchers on it, course code
// compiled once into the ladder's library: the rungs' benchmark (reduce_ladder_bench.cpp) and
// the ladder's ceilings program (reduce_ladder_ceilings.cpp) measure through it alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"

class ReduceLadderInput {
 public:
  using Launcher = void (*)(const int*, int, int, long long*, long long*, cudaStream_t);
  // 2^28 ints (1 GiB, far beyond the L2), hashed from the run seed on the device; their sum
  // is computed on the host from the same hash, without downloading them.
  static constexpr int kCount = 1 << 28;

  explicit ReduceLadderInput(course::Benchmark& bench);

  // Times `launch` at `block_size`, its sum checked after every call (the calls alternate
  // between the input and the input with one element changed). With a non-empty shared_key
  // the measurement is a shared ceiling (course::Benchmark::shared).
  void time_rung(const std::string& label, Launcher launch, int block_size,
                 const std::string& shared_key = "");

  // What every rung is compared with, as shared ceilings: CUB's DeviceReduce::Sum and the
  // course's rungs 1 (block 512), 5 and 6 (block 1024).
  void time_course_baselines();

 private:
  course::Benchmark& bench_;
  double bytes_;
  std::uint64_t seed_;
  course::DeviceBuffer<int> in_;
  std::vector<long long> expected_;
  course::DeviceBuffer<long long> out_;
  course::TimedIo sums_in_;
};
