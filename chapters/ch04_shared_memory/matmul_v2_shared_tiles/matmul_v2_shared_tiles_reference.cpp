// CPU reference for matmul_v2_shared_tiles: the double-precision product shared by every rung.
#include "../matmul_ladder_reference.inc"
