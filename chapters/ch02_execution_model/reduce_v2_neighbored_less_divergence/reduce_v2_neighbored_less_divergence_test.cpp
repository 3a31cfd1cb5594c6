// Correctness of reduce_v2_neighbored_less_divergence: the cases shared by every rung of the ladder.
#include "reduce_v2_neighbored_less_divergence.h"

#define COURSE_REDUCE reduce_v2_neighbored_less_divergence
#include "../reduce_ladder_test.inc"
