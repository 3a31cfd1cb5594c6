// The matrix-product ladder's ceilings program: cuBLAS SGEMM on the benchmark's input,
// measured once per run for every rung graded in it (course::Benchmark::shared).
#include "course/bench.h"
#include "matmul_ladder_measure.h"

void course::run_ceilings(course::Benchmark& bench) {
  MatmulLadderInput input(bench);
  input.time_cublas(bench);
}
