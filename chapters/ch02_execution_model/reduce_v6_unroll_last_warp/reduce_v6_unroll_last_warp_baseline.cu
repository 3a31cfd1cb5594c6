// Course-owned GPU code for reduce_v6_unroll_last_warp: the second pass, CUB's sum and the input generator.
#include "../reduce_ladder_baseline.cuh"
