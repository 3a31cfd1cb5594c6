// Course-owned GPU code for matmul_v2_shared_tiles: cuBLAS SGEMM and the hashed input fill.
#include "../matmul_ladder_baseline.inc"
