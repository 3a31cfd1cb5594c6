// Benchmark shared by every rung of the matrix-product ladder: FP32 throughput of the rung on a
// 4096^3 product against cuBLAS SGEMM (FP32 arithmetic, no TF32) on the same inputs in the same
// run (a shared ceiling: graded, cuBLAS is timed once per run by the ladder's ceilings program,
// matmul_ladder_ceilings.cpp). The rung's output is compared in full with the course's own
// tiled kernel's (matmul_ladder_measure.h), and that with a double-precision CPU value at
// sampled positions. A copy of C is far cheaper
// than the product, so every call's C is checked, with one element of A changed in every other
// call: a C remembered from an earlier call is caught. Compiled once per rung with
// COURSE_EXERCISE (the rung's launcher), COURSE_EXERCISE_NAME (its measurement name, a string
// literal) and COURSE_EXERCISE_HEADER defined by the build.
#include <vector>

#include "course/bench.h"
#include "course/buffers.h"
#include "matmul_ladder.h"
#include "matmul_ladder_measure.h"

#if !defined(COURSE_EXERCISE) || !defined(COURSE_EXERCISE_NAME) || !defined(COURSE_EXERCISE_HEADER)
#error "the build defines COURSE_EXERCISE, COURSE_EXERCISE_NAME and COURSE_EXERCISE_HEADER"
#endif
#include COURSE_EXERCISE_HEADER

void course::run_benchmark(course::Benchmark& bench) {
  MatmulLadderInput input(bench);
  const std::vector<float> expected = input.time_cublas(bench);
  const int M = MatmulLadderInput::kM, N = MatmulLadderInput::kN, K = MatmulLadderInput::kK;
  course::DeviceBuffer<float> c(static_cast<std::size_t>(M) * N);
  c.fill_bytes(course::kPoisonByte);
  bench.time(
      COURSE_EXERCISE_NAME, MatmulLadderInput::kFlops, course::Unit::TFLOPs,
      [&](cudaStream_t s) { COURSE_EXERCISE(input.a.data(), input.b.data(), c.data(), M, N, K, s); },
      course::TimedIo{{course::close_output(c, input.tolerance, "C")}, input.one_element_changed});
  bench.check(COURSE_EXERCISE_NAME,
              course::compare_close(expected, c.download(), input.tolerance,
                                    {{static_cast<std::size_t>(M),
                                      static_cast<std::size_t>(N)}, "C"}));
}
