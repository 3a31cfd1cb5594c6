// Course-owned GPU code for reduce_v7_complete_unroll: the second pass, CUB's sum and the input generator.
#include "../reduce_ladder_baseline.cuh"
