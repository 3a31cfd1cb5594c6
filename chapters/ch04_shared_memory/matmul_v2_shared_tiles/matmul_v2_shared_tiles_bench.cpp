// matmul_v2_shared_tiles against cuBLAS SGEMM (FP32, no TF32) on the same 4096^3 product.
#include "matmul_v2_shared_tiles.h"

#define COURSE_MATMUL matmul_v2_shared_tiles
#define COURSE_MATMUL_NAME "matmul_v2_shared_tiles"
#include "../matmul_ladder_bench.inc"
