// Course-owned GPU code for reduce_v4_unroll2: the second pass, CUB's sum and the input generator.
#include "../reduce_ladder_baseline.cuh"
