// Course-owned GPU code for reduce_v3_interleaved: the second pass, CUB's sum and the input generator.
#include "../reduce_ladder_baseline.cuh"
