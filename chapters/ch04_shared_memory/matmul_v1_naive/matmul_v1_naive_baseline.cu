// Course-owned GPU code for matmul_v1_naive: cuBLAS SGEMM and the hashed input fill.
#include "../matmul_ladder_baseline.inc"
