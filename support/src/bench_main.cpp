// main() of every exercise's benchmark binary: the exercise defines course::run_benchmark.
#include "course/bench.h"

int main(int argc, char** argv) { return course::benchmark_main(argc, argv, course::run_benchmark); }
