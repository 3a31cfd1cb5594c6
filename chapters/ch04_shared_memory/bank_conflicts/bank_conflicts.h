// Exercise ch04 / bank_conflicts: the Gram matrix G = T T^T of many small tiles, computed in
// shared memory without bank conflicts.
//
// Frozen API: the tests and the benchmark call exactly this. `in` holds `tiles` matrices T of
// 32 rows x C columns, each row-major, one after the other (tile b starts at in + b * 32 * C).
// `out` receives, for each tile, the 32 x 32 matrix G[i][j] = sum over k < C of
// T[i][k] * T[j][k], row-major (tile b's G starts at out + b * 1024).
//   bank_conflicts_square: C = 32 (square tiles)
//   bank_conflicts_rect:   C = 64 (rectangular tiles)
// `tiles` is 0 (do nothing) up to 2,000,000. Both pointers are device pointers to
// float-aligned memory. Nothing outside out[0, tiles * 1024) may be written, and `in` must not
// be modified. The work is enqueued on `stream`; the functions return without waiting.
//
// The conflicted version of both kernels is in bank_conflicts_baseline.cu: it is correct, and
// it is what the benchmark compares against.
#pragma once

#include <cuda_runtime.h>

constexpr int kBankTileRows = 32;
constexpr int kBankSquareCols = 32;
constexpr int kBankRectCols = 64;

void bank_conflicts_square(const float* in, float* out, int tiles, cudaStream_t stream);
void bank_conflicts_rect(const float* in, float* out, int tiles, cudaStream_t stream);
