// Correctness of reduce_v4_unroll2: the cases shared by every rung of the ladder.
#include "reduce_v4_unroll2.h"

#define COURSE_REDUCE reduce_v4_unroll2
#include "../reduce_ladder_test.inc"
