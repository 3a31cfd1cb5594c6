// reduce_v6_unroll_last_warp against CUB's DeviceReduce::Sum on the same 2^28 ints.
#include "reduce_v6_unroll_last_warp.h"

#define COURSE_REDUCE reduce_v6_unroll_last_warp
#define COURSE_REDUCE_NAME "reduce_v6_unroll_last_warp"
#include "../reduce_ladder_bench.inc"
