// reduce_v2_neighbored_less_divergence against CUB's DeviceReduce::Sum on the same 2^28 ints.
#include "reduce_v2_neighbored_less_divergence.h"

#define COURSE_REDUCE reduce_v2_neighbored_less_divergence
#define COURSE_REDUCE_NAME "reduce_v2_neighbored_less_divergence"
#include "../reduce_ladder_bench.inc"
