// The matrix-product ladder's benchmark input and cuBLAS's measurement on it, course code
// compiled once into the ladder's library: the rungs' benchmark (matmul_ladder_bench.cpp) and
// the ladder's ceilings program (matmul_ladder_ceilings.cpp) measure through it alike.
#pragma once

#include <functional>
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "course/compare.h"

// C = A B for row-major A (M x K) and B (K x N), FP32, enqueued on `stream`: a plain tiled
// kernel of the course's own, the expected output of every rung's benchmark.
void matmul_ladder_device_reference(const float* A, const float* B, float* C, int M, int N, int K,
                                    cudaStream_t stream);

struct MatmulLadderInput {
  // A 4096^3 product: far beyond the L2, long enough to time well.
  static constexpr int kM = 4096, kN = 4096, kK = 4096;
  static constexpr double kFlops = 2.0 * kM * kN * static_cast<double>(kK);

  // A and B hashed from the run seed on the device, in [-1, 1).
  explicit MatmulLadderInput(course::Benchmark& bench);

  // cuBLAS SGEMM on A and B, the ceiling every rung is compared with (a shared ceiling,
  // course::Benchmark::shared). Returns the C every output is compared with: the course's
  // device reference (matmul_ladder_device_reference), checked at sampled positions against a
  // double-precision CPU value, and cuBLAS's C checked against it where cuBLAS runs here.
  // Under the grader cuBLAS is timed by the ceilings program and never called here, so the
  // rung's benchmark does not load cuBLAS's modules (seconds, with eager loading).
  std::vector<float> time_cublas(course::Benchmark& bench);

  course::DeviceBuffer<float> a, b;
  const course::Tolerance tolerance{1e-4, 1e-2};
  // Adding 1 to one element of A changes a row of C: calls alternate between the two As.
  std::function<void(cudaStream_t, int)> one_element_changed;
};
