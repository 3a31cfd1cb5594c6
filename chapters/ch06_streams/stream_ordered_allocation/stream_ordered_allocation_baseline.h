// Course-owned code the stream_ordered_allocation benchmark compares against (not student
// code).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// process_chunks' work the way it is written without a pool: for each non-empty chunk,
// cudaMalloc its scratch, the course's own two kernels on `stream` (the solution's launch
// shape), cudaFree the scratch. cudaFree waits for the device, so this returns only once every
// chunk's work has finished.
void stream_ordered_allocation_malloc_per_chunk(const std::uint32_t* in, std::uint32_t* out,
                                                const std::size_t* offsets, int chunks,
                                                cudaStream_t stream);
