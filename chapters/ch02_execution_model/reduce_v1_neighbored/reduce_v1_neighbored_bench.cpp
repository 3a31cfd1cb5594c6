// reduce_v1_neighbored against CUB's DeviceReduce::Sum on the same 2^28 ints.
#include "reduce_v1_neighbored.h"

#define COURSE_REDUCE reduce_v1_neighbored
#define COURSE_REDUCE_NAME "reduce_v1_neighbored"
#include "../reduce_ladder_bench.inc"
