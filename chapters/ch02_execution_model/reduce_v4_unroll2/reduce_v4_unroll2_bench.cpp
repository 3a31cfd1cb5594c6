// reduce_v4_unroll2 against CUB's DeviceReduce::Sum on the same 2^28 ints.
#include "reduce_v4_unroll2.h"

#define COURSE_REDUCE reduce_v4_unroll2
#define COURSE_REDUCE_NAME "reduce_v4_unroll2"
#include "../reduce_ladder_bench.inc"
