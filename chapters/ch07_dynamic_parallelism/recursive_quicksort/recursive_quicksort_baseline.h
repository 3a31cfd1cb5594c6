// Course-owned code the recursive_quicksort benchmark compares against (not student code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// CUB's cub::DeviceRadixSort::SortKeys of n ints (n < 2^31), all 32 bits, keys_in into
// keys_out on `stream`: the bytes of temporary storage it needs (ask once, allocate outside
// the timed call), and the sort itself. Returns without waiting.
std::size_t cub_radix_sort_temp_bytes(std::size_t n);
void cub_radix_sort(const int* keys_in, int* keys_out, std::size_t n, void* temp,
                    std::size_t temp_bytes, cudaStream_t stream);
