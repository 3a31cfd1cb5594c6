// Cases of reduce_v6_unroll_last_warp beyond those every rung meets (reduce_ladder_test.cpp,
// linked into the same test binary): warp_reduce_last on its own, through the course's probe.
#include <gtest/gtest.h>

#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "course/testing.h"
#include "reduce_v6_unroll_last_warp_probe.h"

namespace {

using course::testing::GuardedInput;

// warp_reduce_last on its own: first with the warp converged, then with its lanes split
// across two branches (halves, alternate lanes, single lanes, random splits; each group
// first and last). Lockstep-only code (`volatile` without __syncwarp) reads values another
// lane has not written yet and returns a wrong sum here.
void check_warp_reduce_last(const std::vector<unsigned>& masks, long long spin_cycles,
                            const char* situation) {
  auto rng = course::testing::case_rng();
  const int trials = static_cast<int>(masks.size());
  std::vector<long long> values(64 * masks.size());
  const auto ints = course::random_ints(values.size(), INT_MIN, INT_MAX, rng);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<long long>(ints[i]) * 4099;  // beyond 32 bits
  GuardedInput<long long> in(values);
  GuardedInput<unsigned> mask_buffer(masks);
  auto sums = course::testing::poisoned_output<long long>(masks.size());
  probe_warp_reduce_last(in.data(), mask_buffer.data(), trials, spin_cycles, sums.data(),
                         nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = sums.download();
  int wrong = 0;
  std::string first;
  for (int t = 0; t < trials; ++t) {
    long long expected = 0;
    for (int k = 0; k < 64; ++k) expected += values[64 * t + k];
    if (got[t] != expected && wrong++ == 0) {
      char mask_text[16];
      std::snprintf(mask_text, sizeof mask_text, "0x%08x", masks[t]);
      first = std::string("lane mask ") + mask_text + ": expected " + std::to_string(expected) +
              ", got " + std::to_string(got[t]);
    }
  }
  EXPECT_EQ(wrong, 0)
      << "warp_reduce_last returned a wrong sum in " << wrong << " of " << trials
      << " trials " << situation << " (first: " << first << "). Under independent thread "
      << "scheduling (Volta and later) the lanes of a warp need not run in lockstep, and "
      << "`volatile` alone does not make one lane's write visible before another lane reads "
      << "it: put __syncwarp() between each step's reads and writes, or reduce in registers "
      << "with __shfl_down_sync.";
}

TEST(WarpReduceLast, SumsSixtyFourValuesConverged) {
  check_warp_reduce_last(std::vector<unsigned>(8, 0xffffffffu), 0, "with the warp converged");
}

TEST(WarpReduceLast, SumsWhenLanesAreSplitAcrossBranches) {
  std::vector<unsigned> masks = {0x0000ffffu, 0xffff0000u, 0x55555555u, 0xaaaaaaaau,
                                 0x0f0f0f0fu, 0x00ff00ffu, 0x00000001u, 0xfffffffeu,
                                 0x80000000u, 0x7fffffffu};
  auto rng = course::testing::case_rng();
  for (int i = 0; i < 22; ++i) masks.push_back(static_cast<unsigned>(rng()));
  check_warp_reduce_last(masks, 0, "with the lanes split across two branches");
  check_warp_reduce_last(masks, 2000, "with the lanes split across two branches, one spinning");
}

}  // namespace
