// Course-owned GPU code for reduce_v2_neighbored_less_divergence: the second pass, CUB's sum and the input generator.
#include "../reduce_ladder_baseline.cuh"
