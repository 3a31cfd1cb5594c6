"""Auto-grader for the CUDA course: builds a submission, tests it on the GPU, runs
compute-sanitizer, benchmarks it against in-run ceilings and writes one report."""

__version__ = "0.1.0"
