// reduce_v5_unroll8 against CUB's DeviceReduce::Sum on the same 2^28 ints.
#include "reduce_v5_unroll8.h"

#define COURSE_REDUCE reduce_v5_unroll8
#define COURSE_REDUCE_NAME "reduce_v5_unroll8"
#include "../reduce_ladder_bench.inc"
