// reduce_v7_complete_unroll against CUB's DeviceReduce::Sum on the same 2^28 ints.
#include "reduce_v7_complete_unroll.h"

#define COURSE_REDUCE reduce_v7_complete_unroll
#define COURSE_REDUCE_NAME "reduce_v7_complete_unroll"
#include "../reduce_ladder_bench.inc"
