// Course-owned GPU code for grid_sync's tests and benchmark; not part of the student's API.
#pragma once

#include <cuda_runtime.h>

// The benchmark's baseline: jacobi_per_sweep's contract (grid_sync.h) met the classic way, one
// launch of one thread per element for every sweep, the kernel boundary as the barrier.
void course_jacobi_per_sweep(const int* in, int n, int sweeps, int* out, int* scratch,
                             cudaStream_t stream);

// A small cooperative kernel of the course's own, for the test that shows what an oversized
// cooperative grid does: each block writes its index to ids[b], the grid synchronises, then
// each block copies its right neighbour's entry, rotated[b] = ids[(b + 1) % blocks], which is
// right only if every block got past the barrier after every other block had written.
//
// The largest grid of it that can be resident at once on the current device (blocks per SM
// from the occupancy API, times the SM count).
int rotate_probe_max_blocks();
// Launches it cooperatively with `blocks` blocks on `stream`, checked by
// check_cooperative_launch: more than rotate_probe_max_blocks() blocks throw course::CudaError.
// ids and rotated hold `blocks` ints each.
void rotate_probe(int blocks, int* ids, int* rotated, cudaStream_t stream);
