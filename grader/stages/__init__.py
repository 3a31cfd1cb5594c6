"""The grading stages, one module each: build, integrity, technique, tests, sanitizer (the
tests under compute-sanitizer), benchmark; ceilings (the shared ceilings the benchmarks
recorded) and measured (a measurement alone on the GPU, taken again when another process
disturbed it) serve the benchmark stage; common holds what they share.

A stage runs its program and returns one model.StageResult that says what happened (status,
message, cases, metrics with their ratios); grader.scoring awards the points and decides the
exercise's verdict, grader.pipeline runs the stages in order.
"""
