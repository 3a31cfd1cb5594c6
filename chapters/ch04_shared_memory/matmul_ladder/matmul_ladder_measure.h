// The matrix-product ladder's benchmark input and cuBLAS's measurement on it, course code
// compiled once into the ladder's library: the rungs' benchmark (matmul_ladder_bench.cpp) and
// the ladder's ceilings program (matmul_ladder_ceilings.cpp) measure through it alike.
#pragma once

#include <functional>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/compare.h"

struct MatmulLadderInput {
  // A 4096^3 product: far beyond the L2, long enough to time well.
  static constexpr int kM = 4096, kN = 4096, kK = 4096;
  static constexpr double kFlops = 2.0 * kM * kN * static_cast<double>(kK);

  // A and B hashed from the run seed on the device, in [-1, 1).
  explicit MatmulLadderInput(course::Benchmark& bench);

  // cuBLAS SGEMM on A and B, the ceiling every rung is compared with (a shared ceiling,
  // course::Benchmark::shared), its C checked at sampled positions against a double-precision
  // CPU value. Returns cuBLAS's C, what a rung's C is compared with.
  std::vector<float> time_cublas(course::Benchmark& bench);

  course::DeviceBuffer<float> a, b;
  const course::Tolerance tolerance{1e-4, 1e-2};
  // Adding 1 to one element of A changes a row of C: calls alternate between the two As.
  std::function<void(cudaStream_t, int)> one_element_changed;
};
