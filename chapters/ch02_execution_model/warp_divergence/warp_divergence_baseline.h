// Course-owned GPU code for warp_divergence.
#pragma once

#include <cuda_runtime.h>

// One thread per element, branch on the element's parity: every warp diverges.
void divergent_even_odd(const unsigned* in, unsigned* out, int n, cudaStream_t stream);
