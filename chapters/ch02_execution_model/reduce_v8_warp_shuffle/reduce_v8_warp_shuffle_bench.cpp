// reduce_v8_warp_shuffle against CUB's DeviceReduce::Sum on the same 2^28 ints.
#include "reduce_v8_warp_shuffle.h"

#define COURSE_REDUCE reduce_v8_warp_shuffle
#define COURSE_REDUCE_NAME "reduce_v8_warp_shuffle"
#include "../reduce_ladder_bench.inc"
