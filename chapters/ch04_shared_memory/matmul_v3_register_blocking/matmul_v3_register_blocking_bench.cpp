// matmul_v3_register_blocking against cuBLAS SGEMM (FP32, no TF32) on the same 4096^3 product.
#include "matmul_v3_register_blocking.h"

#define COURSE_MATMUL matmul_v3_register_blocking
#define COURSE_MATMUL_NAME "matmul_v3_register_blocking"
#include "../matmul_ladder_bench.inc"
