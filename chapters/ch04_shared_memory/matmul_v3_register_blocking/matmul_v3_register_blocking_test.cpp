// Correctness of matmul_v3_register_blocking: the cases shared by every rung of the matrix-product ladder.
#include "matmul_v3_register_blocking.h"

#define COURSE_MATMUL matmul_v3_register_blocking
#include "../matmul_ladder_test.inc"
