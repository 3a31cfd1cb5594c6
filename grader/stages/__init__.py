"""The grading stages, one module each, in the order grader.pipeline.EXERCISE_STAGES runs them:
sources (the sources check, which refuses an exercise as its build stage before anything
compiles), build, integrity and technique (which read the compiled code), tests, sanitizer (the
tests under compute-sanitizer) and benchmark. Two modules serve the benchmark: ceilings (the
shared ceilings the benchmarks recorded, measured once per run) and measured (a measurement
alone on the GPU, taken again when another process disturbed it); common holds what they all
share.

A stage runs its program and returns one model.StageResult that says what happened (status,
message, cases, metrics with their ratios, its typed model.*Details); it awards no points:
grader.scoring.score does, once per exercise, from every stage's result.
"""
