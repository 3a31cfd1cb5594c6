"""The one place that awards points and decides verdicts: score().

The stages (grader/stages/) say what happened; from their results score() gives the tests
stage its share of the correctness points (voided by a failing sanitizer), turns the benchmark's
ratios into performance points, awards each technique rule's points (only to a correct exercise;
a failed rule with `voids = "performance"` also voids the performance points, one with
`voids = "all"` every point), and decides the exercise's status and message. It runs once per
exercise, on copies: the stages it is given stay as the stages left them, and nothing changes
the result it returns, so a verdict is never the sum of several modules' edits.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Sequence

from grader import workspace
from grader.manifest import Exercise
from grader.model import ExerciseResult, ExerciseStatus, StageName, StageResult, StageStatus

# A test run that ended this way is the exercise's verdict, whatever else happened.
_RUN_VERDICTS = {StageStatus.CRASHED: ExerciseStatus.CRASHED,
                 StageStatus.TIMED_OUT: ExerciseStatus.TIMED_OUT,
                 StageStatus.EXITED_EARLY: ExerciseStatus.EXITED_EARLY}
# Stage outcomes that hold nothing against the code. A sanitizer in ERROR (not installed, the
# device unsupported, a filter selecting no case) holds nothing against it either, but it did
# not check it: correctness points are withheld and the exercise is not benchmarked.
_NOT_FAILING = (StageStatus.PASSED, StageStatus.SKIPPED, StageStatus.ERROR,
                StageStatus.NOT_COUNTED)
_CHECKED = (StageStatus.PASSED, StageStatus.SKIPPED)
# What the sanitizer stage says of a tool whose run found nothing while cases failed under it
# (grader/stages/sanitizer.py): "memcheck: clean (6 cases failed under it)".
_FAILED_UNDER_SANITIZER = re.compile(r"\((\d+) cases? failed under it\)")


def performance_points(ratio: float | None, zero_at: float, full_at: float,
                       points: float) -> float:
    """Full points at or above full_at, none at or below zero_at, linear in between."""
    if ratio is None or ratio != ratio or ratio <= zero_at:
        return 0.0
    if ratio >= full_at:
        return points
    return points * (ratio - zero_at) / (full_at - zero_at)


def correctness_points(passed: int, total: int, points: float) -> float:
    """A share of the points for each passing case."""
    if total <= 0:
        return 0.0
    return points * passed / total


def correct(stages: list[StageResult]) -> bool:
    """Every case passed and no sanitizer found anything: the condition for benchmarking."""
    tests = _stage(stages, StageName.TESTS)
    return (tests is not None and tests.status == StageStatus.PASSED
            and all(s.status in _CHECKED for s in stages if s.name == StageName.SANITIZER))


def score_tests(ex: Exercise, tests: StageResult, sanitizer: StageResult | None) -> None:
    """The tests stage's points: a share per passing case, none after sanitizer findings."""
    tests.max_points = ex.correctness_points
    tests.points = round(correctness_points(tests.details.get("passed", 0),
                                            tests.details.get("total", 0),
                                            ex.correctness_points), 3)
    if sanitizer is not None and sanitizer.status == StageStatus.FAILED:
        if tests.points > 0:
            tests.message += f"; {tests.points:g} points voided by the sanitizer's findings"
        tests.points = 0.0
    elif sanitizer is not None and sanitizer.status == StageStatus.ERROR:
        if tests.points > 0:
            tests.message += (f"; {tests.points:g} points withheld: the sanitizer could not "
                              "check the code")
        tests.points = 0.0


def judge_sanitizer(tests: StageResult, sanitizer: StageResult | None) -> None:
    """A sanitizer run that found nothing while the code fails its tests, cases failing under
    it too, is not a pass: wrong code stops early or skips work, so a clean run over it
    vouches for nothing. It is NOT_COUNTED, which voids nothing (there was no finding) and
    shows no green "passed". (Code that passes its tests keeps a clean run as a pass.)"""
    if sanitizer is None or sanitizer.status != StageStatus.PASSED \
            or tests.status == StageStatus.PASSED:
        return
    failed = sum(int(m.group(1)) for m in _FAILED_UNDER_SANITIZER.finditer(sanitizer.message))
    if failed:
        sanitizer.status = StageStatus.NOT_COUNTED
        sanitizer.message += (f"; not counted as a pass: a clean run vouches for the code only "
                              f"when the cases it ran pass ({failed} did not)")


def score_benchmark(ex: Exercise, bench: StageResult) -> None:
    """Points for each metric with a ratio; the stage fails when any are lost."""
    bench.max_points = sum(p.points for p in ex.performance)
    if bench.status == StageStatus.SKIPPED:
        return
    for perf, metric in zip(ex.performance, bench.metrics, strict=True):
        if metric.ratio is None:
            continue  # the benchmark stage said why there is no ratio
        metric.points = round(performance_points(metric.ratio, perf.zero_at, perf.full_at,
                                                 perf.points), 3)
        # Said when it reaches across full marks: the ratio is then within the timing's noise.
        interval = metric.ratio_interval
        across = (f" (95% interval {interval[0]:.2f}-{interval[1]:.2f}x)"
                  if interval and interval[0] < perf.full_at <= interval[1] else "")
        if metric.points < perf.points:
            metric.message = (f"{metric.ratio:.2f}x {perf.baseline}{across}; full marks at "
                              f"{perf.full_at:.2f}x, none at {perf.zero_at:.2f}x")
            if perf.hint:
                metric.message += f". Try: {perf.hint}"
        else:
            metric.message = f"{metric.ratio:.2f}x {perf.baseline} (full marks at " \
                             f"{perf.full_at:.2f}x)"
        if bench.details.get("shared_gpu"):
            metric.message += f" [measured while {bench.details.shared_gpu}: " \
                              "--allow-shared-gpu]"
    bench.points = round(sum(m.points for m in bench.metrics), 3)
    if bench.status == StageStatus.PASSED and bench.points < bench.max_points:
        bench.status = StageStatus.FAILED
    bench.message = "; ".join(f"{m.name}: {m.message}" for m in bench.metrics)


def score_technique(ex: Exercise, technique: StageResult, is_correct: bool) -> None:
    """Each met rule's points, when the exercise is correct (so a skeleton earns nothing). A
    stage in ERROR (cuobjdump missing or failing) checked nothing, and points for a rule
    nobody checked are not given: they are withheld, and the message says why."""
    technique.max_points = sum(t.points for t in ex.technique)
    rules = technique.details.get("rules", [])
    if technique.status == StageStatus.ERROR:
        technique.points = 0.0
        if technique.max_points > 0:
            technique.message += f"; its {technique.max_points:g} points are withheld"
        return
    for rule in rules:
        rule["points"] = rule["max_points"] if rule["passed"] and is_correct else 0.0
    technique.points = round(sum(r["points"] for r in rules), 3)
    earned = sum(r["max_points"] for r in rules if r["passed"])
    if not is_correct and earned > 0:
        technique.message += f"; its {earned:g} points need a correct exercise"


def judge_technique(technique: StageResult | None, is_correct: bool) -> None:
    """Rules met by code that fails its tests earn nothing (score_technique), so the stage is
    not shown as "passed" either: an untouched skeleton meets every "calls no CUB" rule."""
    if technique is not None and not is_correct and technique.status == StageStatus.PASSED \
            and technique.max_points > 0:
        technique.status = StageStatus.NOT_COUNTED


def voided_by_technique(ex: Exercise, technique: StageResult | None) -> list[str]:
    """Names of the rules that void the performance points: those that failed, or all of
    them when the stage could not check any (a CUB call must not earn speed points on a
    machine without cuobjdump)."""
    return _voiding(ex, technique, ("performance", "all"))


def voiding_everything(ex: Exercise, technique: StageResult | None) -> list[str]:
    """Names of the failed (or unchecked) rules with `voids = "all"`: the exercise's point is
    the technique, so a correct answer without it earns nothing."""
    return _voiding(ex, technique, ("all",))


def _voiding(ex: Exercise, technique: StageResult | None, kinds: tuple[str, ...]) -> list[str]:
    if technique is None:
        return []
    if technique.status == StageStatus.ERROR:
        return [t.name for t in ex.technique if t.voids in kinds]
    voids = {t.name: t.voids for t in ex.technique}
    return [r["name"] for r in technique.details.get("rules", [])
            if not r["passed"] and voids.get(r["name"]) in kinds]


def void_performance(bench: StageResult, rules: list[str], unchecked: bool = False) -> None:
    if bench.points > 0 or bench.status == StageStatus.PASSED:
        bench.status = StageStatus.FAILED
    for metric in bench.metrics:
        metric.points = 0.0
    bench.points = 0.0
    why = (f"performance points voided: technique rule {', '.join(rules)} "
           f"{'could not be checked' if unchecked else 'failed'}")
    bench.message = f"{why}; {bench.message}" if bench.message else why


def void_everything(ex: Exercise, stages: list[StageResult], rules: list[str],
                    unchecked: bool = False) -> str:
    """Zero every stage's points; returns the exercise's message, which names the rule and
    what it asks for (the student's result may be right: what it lacks is the technique)."""
    for stage in stages:
        if stage.points > 0:
            stage.message += "; its points are voided by the technique stage"
        stage.points = 0.0
        for metric in stage.metrics:
            metric.points = 0.0
    for rule in _stage(stages, StageName.TECHNIQUE).details.get("rules", []):
        rule["points"] = 0.0
    by_name = {t.name: t for t in ex.technique}
    what = "; ".join(f"{name}: {by_name[name].message}" if by_name[name].message else name
                     for name in rules)
    hints = "; ".join(by_name[name].hint for name in rules if by_name[name].hint)
    verb = "could not be checked" if unchecked else "failed"
    return (f"technique rule {', '.join(rules)} {verb}, which voids every point of this "
            f"exercise ({what})" + (f". Try: {hints}" if hints else ""))


def score(ex: Exercise, stages: Sequence[StageResult], *, missing: Sequence[str] = (),
          folder: Path | None = None, not_run: str = "") -> ExerciseResult:
    """The exercise's result from what its stages found: each stage's points and the verdict.
    `stages` are those the pipeline ran, in order (none when files are `missing` from
    `folder`); `not_run` says why a compiled exercise was not run here (--build-only, a GPU
    too old). Pure: the result holds scored copies, the stages given are left as they are."""
    return _score(ex, copy.deepcopy(list(stages)), list(missing), folder, not_run)


def _score(ex: Exercise, stages: list[StageResult], missing: list[str], folder: Path | None,
           not_run: str) -> ExerciseResult:
    """score() on the stages themselves, which it changes."""
    if missing:
        return _not_submitted(ex, missing, folder or Path("."))
    build = _stage(stages, StageName.BUILD)
    if build is not None and "refused" in build.details:
        return _refused_sources(ex, build)
    if build is None or build.status != StageStatus.PASSED:
        return _result(ex, stages, ExerciseStatus.COMPILE_ERROR,
                       build.message.rstrip(":") if build else "not built")
    integrity = _stage(stages, StageName.INTEGRITY)
    if integrity is not None and integrity.status != StageStatus.PASSED:
        return _not_trusted(ex, stages)
    if not_run:
        return _not_run(ex, stages, not_run)
    return _grade(ex, stages)


# In place, for tests that look at the stages they scored; the pipeline calls score().
def grade(ex: Exercise, stages: list[StageResult]) -> ExerciseResult:
    return _score(ex, stages, [], None, "")


def not_run(ex: Exercise, stages: list[StageResult], why: str) -> ExerciseResult:
    return _score(ex, stages, [], None, why)


def not_trusted(ex: Exercise, stages: list[StageResult]) -> ExerciseResult:
    return _score(ex, stages, [], None, "")


def _not_submitted(ex: Exercise, missing: list[str], folder: Path) -> ExerciseResult:
    """Names the files there that look like a missing one (VectorAdd.cu, vector_add.cpp): the
    grader takes only the exact name, and a student would not see why otherwise."""
    hints = [f"{', '.join(near)} {'is' if len(near) == 1 else 'are'} there: rename "
             f"{'it' if len(near) == 1 else 'one'} {name}"
             for name in missing if (near := workspace.near_misses_in(folder, name))]
    return _result(ex, [], ExerciseStatus.NOT_SUBMITTED,
                   f"not submitted: {', '.join(missing)} not found in {folder}"
                   + (f" ({'; '.join(hints)})" if hints else ""))


def _not_trusted(ex: Exercise, stages: list[StageResult]) -> ExerciseResult:
    """The integrity stage found forbidden calls (rejected), or could not look (unchecked):
    either way the code is not run and earns nothing."""
    integrity = _stage(stages, StageName.INTEGRITY)
    status = ExerciseStatus.REJECTED if integrity.status == StageStatus.FAILED \
        else ExerciseStatus.UNCHECKED
    return _result(ex, stages, status, f"integrity: {integrity.message}")


def _refused_sources(ex: Exercise, build: StageResult) -> ExerciseResult:
    """The sources name files outside the submission and the course's headers (the reference,
    another student's work, the system's secrets): rejected before anything is compiled."""
    return _result(ex, [build], ExerciseStatus.REJECTED,
                   "sources refused before the build: " + build.message.split("\n", 1)[0])


def _not_run(ex: Exercise, stages: list[StageResult], why: str) -> ExerciseResult:
    """Compiled, but not run here: no verdict on the code, but the technique rules, which need
    no GPU, are reported (without points)."""
    technique = _stage(stages, StageName.TECHNIQUE)
    if technique is not None:
        score_technique(ex, technique, is_correct=False)
    return _result(ex, stages, ExerciseStatus.SKIPPED, why)


def _grade(ex: Exercise, stages: list[StageResult]) -> ExerciseResult:
    """Points for every stage of a built, trusted exercise that ran, then its status and
    message."""
    tests = _stage(stages, StageName.TESTS)
    score_tests(ex, tests, _stage(stages, StageName.SANITIZER))
    judge_sanitizer(tests, _stage(stages, StageName.SANITIZER))
    technique = _stage(stages, StageName.TECHNIQUE)
    if technique is not None:
        score_technique(ex, technique, correct(stages))
        judge_technique(technique, correct(stages))
    if tests.status == StageStatus.SKIPPED:
        return _result(ex, stages, ExerciseStatus.SKIPPED, tests.message)
    bench = _stage(stages, StageName.BENCHMARK)
    voided: list[str] = []
    if bench is not None:
        score_benchmark(ex, bench)
        voided = voided_by_technique(ex, technique)
        if voided:
            void_performance(bench, voided,
                             unchecked=technique.status == StageStatus.ERROR)

    everything = voiding_everything(ex, technique)
    if everything:
        why = void_everything(ex, stages, everything,
                              unchecked=technique.status == StageStatus.ERROR)

    result = _result(ex, stages, ExerciseStatus.PASSED, "full marks")
    result.score = round(sum(s.points for s in stages), 3)
    if tests.status in _RUN_VERDICTS:
        result.status = _RUN_VERDICTS[tests.status]
        result.message = tests.message
    elif not correct(stages):
        result.status = ExerciseStatus.FAILED
        failing = next((s for s in stages if s.name in (StageName.TESTS, StageName.SANITIZER)
                        and s.status not in _NOT_FAILING), None)
        if failing is None:  # every case passed, but the sanitizer could not check them
            failing = _stage(stages, StageName.SANITIZER)
            result.status = ExerciseStatus.UNCHECKED
        result.message = f"{failing.name}: {failing.message}"
    elif everything:
        result.status = ExerciseStatus.UNCHECKED if technique.status == StageStatus.ERROR \
            else ExerciseStatus.FAILED
        result.message = why
    elif bench is not None and bench.status == StageStatus.NOT_MEASURED and not voided:
        # Not the student's doing: the grade stays open until the measurement can be taken.
        result.status = ExerciseStatus.INCOMPLETE
        result.message = (f"grade incomplete: {bench.message}; its "
                          f"{bench.max_points:g} performance points are withheld until it is "
                          "graded again with the GPU free")
    elif result.score + 1e-9 < result.max_score:
        result.status = ExerciseStatus.PARTIAL
        result.message = "; ".join(f"{s.name}: {s.message}" if s.name == StageName.TECHNIQUE
                                   else s.message for s in (technique, bench)
                                   if s is not None and s.points + 1e-9 < s.max_points)
    return result


def _result(ex: Exercise, stages: list[StageResult], status: ExerciseStatus,
            message: str) -> ExerciseResult:
    return ExerciseResult(ex.key, ex.name, ex.chapter, ex.title, status, 0.0, ex.max_points,
                          message, stages)


def _stage(stages: list[StageResult], name: StageName) -> StageResult | None:
    return next((s for s in stages if s.name == name), None)
