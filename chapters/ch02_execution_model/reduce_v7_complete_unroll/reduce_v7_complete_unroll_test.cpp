// Correctness of reduce_v7_complete_unroll: the cases shared by every rung of the ladder.
#include "reduce_v7_complete_unroll.h"

#define COURSE_REDUCE reduce_v7_complete_unroll
#include "../reduce_ladder_test.inc"
