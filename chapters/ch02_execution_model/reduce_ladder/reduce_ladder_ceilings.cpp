// The reduction ladder's ceilings program: CUB and the course's rungs on the benchmark's
// input, measured once per run for every rung graded in it (course::Benchmark::shared).
#include "course/bench.h"
#include "reduce_ladder_measure.h"

void course::run_ceilings(course::Benchmark& bench) {
  ReduceLadderInput input(bench);
  input.time_course_baselines();
}
