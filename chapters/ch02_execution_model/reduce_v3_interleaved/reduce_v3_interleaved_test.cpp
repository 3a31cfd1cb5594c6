// Correctness of reduce_v3_interleaved: the cases shared by every rung of the ladder.
#include "reduce_v3_interleaved.h"

#define COURSE_REDUCE reduce_v3_interleaved
#include "../reduce_ladder_test.inc"
