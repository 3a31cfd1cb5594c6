// Correctness of reduce_v5_unroll8: the cases shared by every rung of the ladder.
#include "reduce_v5_unroll8.h"

#define COURSE_REDUCE reduce_v5_unroll8
#include "../reduce_ladder_test.inc"
