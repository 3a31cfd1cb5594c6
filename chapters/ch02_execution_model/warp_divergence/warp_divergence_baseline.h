// Course-owned GPU code for warp_divergence.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// One thread per element, branch on the element's parity: every warp diverges.
void divergent_even_odd(const unsigned* in, unsigned* out, int n, cudaStream_t stream);

// data[i] = a value derived from (i, seed), generated on the device.
void fill_hashed_uints(unsigned* data, std::size_t n, std::uint32_t seed, cudaStream_t stream);
