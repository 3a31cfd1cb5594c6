// Course-owned GPU code for matmul_v3_register_blocking: cuBLAS SGEMM and the hashed input fill.
#include "../matmul_ladder_baseline.inc"
