// Correctness of matmul_v1_naive: the cases shared by every rung of the matrix-product ladder.
#include "matmul_v1_naive.h"

#define COURSE_MATMUL matmul_v1_naive
#include "../matmul_ladder_test.inc"
