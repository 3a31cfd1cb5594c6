// Exercise ch06 / programmatic_launch: a chain of short dependent kernels on one stream, each
// launched so that it may start while the kernel before it is still running (programmatic
// dependent launch, compute capability 9.0 and later).
//
// Frozen API: the tests and the benchmark call exactly this.
//
// The work: `steps` steps over data[0, n), step s (0 <= s < steps) replacing every element x
// with apply_step(x, c_s), where c_s are the step's kStepCoefficients coefficients,
// c_s[k] = step_coefficient(s, k). Each step is one kernel, and each kernel has two parts:
//   1. its prologue: every block derives the step's coefficients into shared memory (a thread
//      per coefficient). It needs nothing from the step before, and it costs microseconds;
//   2. its update: after the step before has finished, every element of data through
//      apply_step, read and written in place.
// Launched the ordinary way, each kernel starts only once the one before has ended, and the
// GPU spends the launch and the whole prologue of every step with the data idle. Launched with
// programmatic stream serialization, a kernel may start as soon as the kernel before it allows
// (cudaTriggerProgrammaticLaunchCompletion()), derive its coefficients while that kernel is
// still updating, and wait (cudaGridDependencySynchronize()) only where it reads data.
//
//   run_step_chain(data, n, steps, stream)
//       enqueues the steps on `stream`, in order, after the work already on it, and returns
//       without waiting. Exactly one kernel per step, each with kStepThreads threads per block
//       and step_blocks(n, SM count) blocks (a grid-stride loop covers the rest of data), each
//       step after the first launched with cudaLaunchKernelEx and the launch attribute
//       cudaLaunchAttributeProgrammaticStreamSerialization set to 1 (the first may have it
//       too). Every kernel calls cudaGridDependencySynchronize() before it reads data: a kernel
//       launched this way may be running before the previous step has written anything.
//       data is a device pointer to n floats in [-1, 1]; 1 <= n < 2^31, 0 <= steps <= 4096;
//       steps = 0 enqueues nothing. A second call on the same data continues from what the
//       first left, starting again at step 0.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>

constexpr int kStepThreads = 256;
constexpr int kStepCoefficients = kStepThreads;  // one per thread of a block
// Rounds of the map that derives one coefficient: what makes the prologue cost as much as a
// few elements' updates (some 6 us on an H100, by the count of dependent operations).
constexpr int kDeriveRounds = 1536;

// The grid of every step's kernel: one block per kStepThreads elements, at most one per SM.
// Few blocks, each alive for the whole step, leave each SM room for the next step's block.
inline unsigned step_blocks(std::size_t n, int sm_count) {
  const std::size_t needed = (n + kStepThreads - 1) / kStepThreads;
  const std::size_t most = sm_count > 0 ? static_cast<std::size_t>(sm_count) : 1;
  return static_cast<unsigned>(needed < most ? needed : most);
}

// x -> 1 - r x^2: maps [-1, 1] into itself for 0 <= r <= 2, and is chaotic for r near 2, so a
// value that went through a different sequence of steps ends far from the right one. x * r is
// rounded once and fmaf once, on the host and the device alike: the tests compare exactly.
__host__ __device__ inline float quadratic_map(float x, float r) { return fmaf(x * r, -x, 1.0f); }

// Coefficient k of step s, in [1.875, 2]: a seed in [-1, 1) mixed from s and k, then
// kDeriveRounds rounds of quadratic_map. Deliberately costly, and independent of data.
__host__ __device__ inline float step_coefficient(int step, int k) {
  unsigned h = static_cast<unsigned>(step) * 0x9E3779B1u + static_cast<unsigned>(k) * 0x85EBCA77u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  float z = static_cast<float>(h >> 8) * (1.0f / 8388608.0f) - 1.0f;  // exact: 24-bit grid
  for (int round = 0; round < kDeriveRounds; ++round) z = quadratic_map(z, 1.96875f);
  return fmaf(z, 0.0625f, 1.9375f);
}

// One element through one step: quadratic_map with each of the step's coefficients in turn.
__host__ __device__ inline float apply_step(float x, const float* coefficients) {
  for (int k = 0; k < kStepCoefficients; ++k) x = quadratic_map(x, coefficients[k]);
  return x;
}

void run_step_chain(float* data, std::size_t n, int steps, cudaStream_t stream);
