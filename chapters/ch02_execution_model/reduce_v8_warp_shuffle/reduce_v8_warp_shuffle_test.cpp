// Correctness of reduce_v8_warp_shuffle: the cases shared by every rung of the ladder.
#include "reduce_v8_warp_shuffle.h"

#define COURSE_REDUCE reduce_v8_warp_shuffle
#include "../reduce_ladder_test.inc"
