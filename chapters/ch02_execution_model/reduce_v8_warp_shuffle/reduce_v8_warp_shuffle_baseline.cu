// Course-owned GPU code for reduce_v8_warp_shuffle: the second pass, CUB's sum and the input generator.
#include "../reduce_ladder_baseline.cuh"
