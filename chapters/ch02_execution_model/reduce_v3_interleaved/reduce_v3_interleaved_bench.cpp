// reduce_v3_interleaved against CUB's DeviceReduce::Sum on the same 2^28 ints.
#include "reduce_v3_interleaved.h"

#define COURSE_REDUCE reduce_v3_interleaved
#define COURSE_REDUCE_NAME "reduce_v3_interleaved"
#include "../reduce_ladder_bench.inc"
