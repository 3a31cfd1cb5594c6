// CPU reference for matmul_v3_register_blocking: the double-precision product shared by every rung.
#include "../matmul_ladder_reference.inc"
