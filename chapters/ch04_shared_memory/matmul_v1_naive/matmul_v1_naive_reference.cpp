// CPU reference for matmul_v1_naive: the double-precision product shared by every rung.
#include "../matmul_ladder_reference.inc"
