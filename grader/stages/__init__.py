"""The grading stages, one module each: build, tests, sanitizer, benchmark.

A stage runs its program and returns one model.StageResult that says what happened (status,
message, cases, metrics with their ratios); grader.scoring awards the points and decides the
exercise's verdict, grader.pipeline runs the stages in order.
"""
