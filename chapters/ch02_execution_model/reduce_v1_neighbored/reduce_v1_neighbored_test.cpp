// Correctness of reduce_v1_neighbored: the cases shared by every rung of the ladder.
#include "reduce_v1_neighbored.h"

#define COURSE_REDUCE reduce_v1_neighbored
#include "../reduce_ladder_test.inc"
