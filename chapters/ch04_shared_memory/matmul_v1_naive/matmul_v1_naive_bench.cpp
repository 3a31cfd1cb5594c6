// matmul_v1_naive against cuBLAS SGEMM (FP32, no TF32) on the same 4096^3 product.
#include "matmul_v1_naive.h"

#define COURSE_MATMUL matmul_v1_naive
#define COURSE_MATMUL_NAME "matmul_v1_naive"
#include "../matmul_ladder_bench.inc"
