"""The grading pipeline: configure and build everything once, then for each exercise the
not-submitted check, build, integrity and technique (which read the compiled code, so they run
with --build-only and without a GPU; code that calls what it must not is rejected before it
runs), tests, sanitizer and benchmark (grader/stages/), and the scorer (grader/scoring.py) last.

Every stage runs its program through grader.proc.run, in its own process group with a time
limit and bounded output, so one exercise's compile error, crash, hang, early exit or flood of
output costs that exercise only.
"""

from __future__ import annotations

import datetime as _dt
import platform
import shutil
import time
from typing import Callable

from grader import __version__, hidden, model, scoring
from grader.manifest import Exercise
from grader.model import StageStatus
from grader.stages import benchmark, build, integrity, sanitizer, technique, tests
from grader.stages.common import GradeOptions


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class Grader:
    def __init__(self, options: GradeOptions, exercises: list[Exercise],
                 progress: Callable[[str], None] | None = None,
                 gpu: model.GpuInfo | None = None):
        self.options = options
        self.exercises = exercises
        self.progress = progress or (lambda _message: None)
        self.gpu = gpu
        self.build_log = ""  # build_all's output, for the warnings of files that compiled

    def run(self) -> model.Report:
        report = model.Report(
            submission=str(self.options.submission), seed=self.options.seed,
            started_at=_now(), grader_version=__version__, gpu=self.gpu,
            host=platform.node(),
            options={"build_only": self.options.build_only,
                     "sanitizer": self.options.sanitizer,
                     "benchmark": self.options.benchmark,
                     "cuda_arch": self.options.cuda_arch,
                     "hidden": self.options.hidden,
                     "secret": self.options.secret is not None})
        self.options.build_dir.mkdir(parents=True, exist_ok=True)
        if self.options.work_dir.exists():
            shutil.rmtree(self.options.work_dir, ignore_errors=True)
        build.configure(self.options, self.progress)
        self.build_log = build.build_all(
            self.options, [ex for ex in self.exercises if not self._missing(ex)], self.progress)
        for i, ex in enumerate(self.exercises, 1):
            self.progress(f"[{i}/{len(self.exercises)}] {ex.key}: grading")
            started = time.monotonic()
            outcome = self.grade_exercise(ex)
            report.exercises.append(outcome)
            self.progress(f"[{i}/{len(self.exercises)}] {ex.key}: {outcome.status}, "
                          f"{outcome.score:g}/{outcome.max_score:g} "
                          f"({time.monotonic() - started:.1f} s)")
        report.finished_at = _now()
        return report

    def grade_exercise(self, ex: Exercise) -> model.ExerciseResult:
        """The exercise's result, hidden cases and a secret seed kept out of it."""
        secret_seed = self.options.input_seed if self.options.secret else None
        return hidden.redact(self._grade_exercise(ex), secret_seed)

    def _grade_exercise(self, ex: Exercise) -> model.ExerciseResult:
        missing = self._missing(ex)
        if missing:
            return scoring.not_submitted(ex, missing, self.options.submission / ex.chapter)

        built = build.run(self.options, ex, self.build_log)
        if built.status != StageStatus.PASSED:
            return scoring.grade(ex, [built])
        stages = [built]
        checked = integrity.run(self.options, ex)
        stages.append(checked)
        if checked.status != StageStatus.PASSED:
            return scoring.not_trusted(ex, stages)
        if ex.technique:
            stages.append(technique.run(self.options, ex))
        why_not = self._why_not_run(ex)
        if why_not:
            return scoring.not_run(ex, stages, why_not)

        test_binary = self.options.build_dir / f"{ex.name}_test"
        tested = tests.run(self.options, ex, test_binary)
        stages.append(tested)
        if tested.status == StageStatus.SKIPPED:
            return scoring.grade(ex, stages)

        if (self.options.sanitizer and tested.status != StageStatus.TIMED_OUT
                and "stopped" not in tested.details):  # a case never ends: nothing to check
            stages.append(sanitizer.run(self.options, ex, test_binary))

        if ex.performance:
            if not self.options.benchmark:
                stages.append(benchmark.not_run("not run (--no-benchmark)"))
            elif not scoring.correct(stages):
                stages.append(benchmark.not_run(
                    "not run: the exercise must pass its tests and the sanitizer first"))
            else:
                stages.append(benchmark.run(self.options, ex,
                                            self.options.build_dir / f"{ex.name}_bench"))
        return scoring.grade(ex, stages)

    def _missing(self, ex: Exercise) -> list[str]:
        """The exercise's files missing from the submission (nothing is taken from elsewhere)."""
        folder = self.options.submission / ex.chapter
        return [f for f in ex.files if not (folder / f).is_file()]

    def _why_not_run(self, ex: Exercise) -> str:
        """Why a compiled exercise cannot run here, or "" when it can."""
        if self.options.build_only:
            return "compiled (--build-only: not run)"
        if self.gpu is not None and ex.min_cc > 7.0:
            try:
                cc = float(self.gpu.compute_capability)
            except ValueError:
                cc = 0.0
            if cc < ex.min_cc:
                return f"needs compute capability {ex.min_cc}, this GPU has " \
                       f"{self.gpu.compute_capability}"
        return ""
