// Course-owned GPU code for reduce_v5_unroll8: the second pass, CUB's sum and the input generator.
#include "../reduce_ladder_baseline.cuh"
