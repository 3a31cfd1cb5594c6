// Benchmark shared by every rung, on the same 2^28 ints (1 GiB, far beyond the L2), bandwidth
// counted as bytes read. Compiled once per rung with COURSE_EXERCISE (the rung's launcher),
// COURSE_EXERCISE_NAME (its measurement name) and COURSE_EXERCISE_HEADER defined by the build.
//
// Measured, in this order (the first four are shared ceilings: graded, they are timed once per
// run by the ladder's ceilings program, reduce_ladder_ceilings.cpp):
//   cub_reduce_sum                      CUB's DeviceReduce::Sum: the baseline of rungs 1 and 8
//   course_v1_neighbored                the course's rung 1 at block 512: rungs 2 to 5
//   course_v5_unroll8_b1024             the course's rung 5 at block 1024: rung 6
//   course_v6_unroll_last_warp_b1024    the course's rung 6 at block 1024: rung 7
//   <rung>, <rung>_b256, <rung>_b1024   the rung at block 512 (graded for rungs 1 to 5 and 8),
//                                       256 and 1024 (graded for rungs 6 and 7)
// Rungs 1 to 4 are limited by instructions and latency, not by DRAM, so their fraction of CUB
// changes with the GPU's bandwidth; a speedup over an earlier rung timed in the same run
// does not. Every measurement's sum is checked, after every call: the calls alternate between
// the input and the input with one element changed, so a sum remembered from an earlier call
// is caught.
#include <string>

#include "course/bench.h"
#include "reduce_ladder.h"
#include "reduce_ladder_measure.h"

#if !defined(COURSE_EXERCISE) || !defined(COURSE_EXERCISE_NAME) || !defined(COURSE_EXERCISE_HEADER)
#error "the build defines COURSE_EXERCISE, COURSE_EXERCISE_NAME and COURSE_EXERCISE_HEADER"
#endif
#include COURSE_EXERCISE_HEADER

void course::run_benchmark(course::Benchmark& bench) {
  ReduceLadderInput input(bench);
  input.time_course_baselines();
  const std::string name = COURSE_EXERCISE_NAME;
  for (const int block_size : {512, 256, 1024}) {
    input.time_rung(block_size == 512 ? name : name + "_b" + std::to_string(block_size),
                    COURSE_EXERCISE, block_size);
  }
}
