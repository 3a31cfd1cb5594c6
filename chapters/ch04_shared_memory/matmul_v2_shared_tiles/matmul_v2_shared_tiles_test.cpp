// Correctness of matmul_v2_shared_tiles: the cases shared by every rung of the matrix-product ladder.
#include "matmul_v2_shared_tiles.h"

#define COURSE_MATMUL matmul_v2_shared_tiles
#include "../matmul_ladder_test.inc"
