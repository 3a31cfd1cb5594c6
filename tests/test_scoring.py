"""grader.scoring: points from passed cases and ratios, and the exercise's verdict."""

import math

import pytest

from grader import scoring
from grader.model import ExerciseStatus, StageResult, StageStatus
from grader.scoring import correctness_points, performance_points
from grader.stages import benchmark
from helpers import vector_add

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template


@pytest.mark.parametrize("ratio, expected", [
    (None, 0.0), (math.nan, 0.0), (-1.0, 0.0), (0.0, 0.0), (0.3, 0.0), (0.55, 20.0),
    (0.8, 40.0), (0.79999, 39.9992), (5.0, 40.0), (math.inf, 40.0)])
def test_performance_points(ratio, expected):
    assert performance_points(ratio, 0.3, 0.8, 40) == pytest.approx(expected)


def test_performance_points_is_monotonic():
    values = [performance_points(r / 100, 0.3, 0.8, 40) for r in range(0, 120)]
    assert values == sorted(values)
    assert values[0] == 0 and values[-1] == 40


@pytest.mark.parametrize("passed, total, expected", [
    (0, 0, 0.0), (0, 4, 0.0), (1, 4, 15.0), (3, 4, 45.0), (4, 4, 60.0), (5, -1, 0.0)])
def test_correctness_points(passed, total, expected):
    assert correctness_points(passed, total, 60) == pytest.approx(expected)


# ------------------------------------------------------------------ verdicts (scoring.grade)
# Stage results as the stages return them (no points yet), for vector_add: 60 correctness
# points over the cases, 40 performance points for bandwidth (full at 0.80x, none at 0.30x).

EX = vector_add()


def built(status=StageStatus.PASSED, message=""):
    return StageResult("build", status, message=message)


def ran_tests(passed=4, total=4, status=None, message=None):
    if status is None:
        status = StageStatus.PASSED if passed == total else StageStatus.FAILED
    if message is None:
        message = f"all {passed} cases passed" if passed == total else \
            f"{passed} of {total} cases passed"
    return StageResult("tests", status, message=message,
                       details={"passed": passed, "total": total})


def sanitized(status=StageStatus.PASSED, message="memcheck: clean"):
    return StageResult("sanitizer", status, message=message)


def benchmarked(rate=900.0, baseline=1000.0, status=StageStatus.PASSED, problem=""):
    measurements = {"vector_add": {"name": "vector_add", "valid": True, "rate": rate,
                                   "unit": "GB/s"},
                    "copy": {"name": "copy", "valid": True, "rate": baseline, "unit": "GB/s"}}
    stage = StageResult("benchmark", status, message=problem)
    stage.metrics = [benchmark.metric(perf, measurements, problem) for perf in EX.performance]
    return stage


def test_verdict_compile_error():
    r = scoring.grade(EX, [built(StageStatus.FAILED, "compilation failed; the compiler said:")])
    assert r.status is ExerciseStatus.COMPILE_ERROR
    assert r.message == "compilation failed; the compiler said"
    assert r.score == 0 and r.max_score == 100
    assert [s.name for s in r.stages] == ["build"]


def test_verdict_build_timed_out_is_a_compile_error():
    r = scoring.grade(EX, [built(StageStatus.TIMED_OUT, "the build timed out")])
    assert r.status is ExerciseStatus.COMPILE_ERROR and r.message == "the build timed out"


def test_verdict_timed_out_tests():
    message = "timed out after 60 s while running S.b (a kernel that never finishes, ...)"
    tests = ran_tests(1, 4, StageStatus.TIMED_OUT, message)
    bench = benchmark.not_run("not run: the exercise must pass its tests and the sanitizer first")
    r = scoring.grade(EX, [built(), tests, bench])
    assert r.status is ExerciseStatus.TIMED_OUT
    assert r.message == message
    assert tests.points == 15 and tests.max_points == 60
    assert bench.points == 0 and bench.max_points == 40 and bench.status is StageStatus.SKIPPED
    assert r.score == 15


@pytest.mark.parametrize("stage_status", [StageStatus.CRASHED, StageStatus.EXITED_EARLY])
def test_verdict_run_that_died(stage_status):
    r = scoring.grade(EX, [built(), ran_tests(2, 4, stage_status, "it died"), sanitized()])
    assert r.status == stage_status and r.message == "it died" and r.score == 30


def test_verdict_sanitizer_failure_voids_correctness():
    tests = ran_tests()
    r = scoring.grade(EX, [built(), tests,
                           sanitized(StageStatus.FAILED, "memcheck found 2 errors"),
                           benchmark.not_run("not run: the exercise must pass its tests and "
                                             "the sanitizer first")])
    assert r.status is ExerciseStatus.FAILED
    assert r.message == "sanitizer: memcheck found 2 errors"
    assert tests.points == 0 and tests.max_points == 60
    assert tests.message == "all 4 cases passed; 60 points voided by the sanitizer's findings"
    assert r.score == 0


def test_verdict_sanitizer_failure_after_a_crash_keeps_the_crash():
    tests = ran_tests(1, 4, StageStatus.CRASHED, "crashed with SIGSEGV while running S.b")
    r = scoring.grade(EX, [built(), tests, sanitized(StageStatus.FAILED, "memcheck found 1 error")])
    assert r.status is ExerciseStatus.CRASHED
    assert r.message == ("crashed with SIGSEGV while running S.b; 15 points voided by the "
                         "sanitizer's findings")
    assert r.score == 0


def test_verdict_failing_cases_share_the_points():
    r = scoring.grade(EX, [built(), ran_tests(3, 4), sanitized()])
    assert r.status is ExerciseStatus.FAILED and r.message == "tests: 3 of 4 cases passed"
    assert r.score == 45


def test_verdict_sanitizer_skipped_with_the_tests_does_not_fail():
    stages = [built(), ran_tests(), sanitized(StageStatus.SKIPPED, "no GPU"), benchmarked()]
    assert scoring.correct(stages)
    r = scoring.grade(EX, stages)
    assert r.status is ExerciseStatus.PASSED and r.score == 100


def test_verdict_sanitizer_in_error_withholds_rather_than_fails():
    # It found nothing against the code, but it did not check it either: no correctness
    # points, no benchmark, and a status that says which.
    stages = [built(), ran_tests(), sanitized(StageStatus.ERROR, "could not run")]
    assert not scoring.correct(stages)
    r = scoring.grade(EX, stages)
    assert r.status is ExerciseStatus.UNCHECKED and r.score == 0
    assert r.message == "sanitizer: could not run"
    assert r.stage("tests").message.endswith("60 points withheld: the sanitizer could not "
                                             "check the code")


def test_verdict_partial_performance():
    bench = benchmarked(rate=550.0)
    r = scoring.grade(EX, [built(), ran_tests(), sanitized(), bench])
    assert r.status is ExerciseStatus.PARTIAL
    [metric] = bench.metrics
    assert metric.points == pytest.approx(20.0) and metric.max_points == 40
    assert metric.message.startswith("0.55x copy; full marks at 0.80x, none at 0.30x. Try: ")
    assert bench.status is StageStatus.FAILED and bench.points == pytest.approx(20.0)
    assert r.message == bench.message == f"bandwidth: {metric.message}"
    assert r.score == pytest.approx(80.0)


def timed(name, rate, median_ms, low_ms, high_ms, repeats):
    """A benchmark entry with the median's 95% interval, as support/src/bench.cu writes it."""
    return {"name": name, "valid": True, "rate": rate, "unit": "GB/s", "median_ms": median_ms,
            "ci_low_ms": low_ms, "ci_high_ms": high_ms, "repeats": repeats}


def test_a_ratio_carries_its_interval_and_repeats():
    measurements = {"vector_add": timed("vector_add", 900.0, 1.0, 0.99, 1.02, 6),
                    "copy": timed("copy", 1000.0, 2.0, 1.98, 2.01, 11)}
    m = benchmark.metric(EX.performance[0], measurements, "")
    assert m.ratio == pytest.approx(0.9) and m.repeats == [6, 11]
    # The slow end of the measure over the fast end of the baseline, and the other way round.
    low, high = m.ratio_interval
    assert low == pytest.approx(0.9 * (1.0 / 1.02) * (1.98 / 2.0), abs=1e-4)
    assert high == pytest.approx(0.9 * (1.0 / 0.99) * (2.01 / 2.0), abs=1e-4)
    assert low < m.ratio < high


@pytest.mark.parametrize("missing", ["ci_low_ms", "ci_high_ms", "median_ms"])
def test_no_interval_without_both_medians_intervals(missing):
    measure = timed("vector_add", 900.0, 1.0, 0.99, 1.02, 6)
    measure[missing] = 0.0  # what the bench writes for a median it could not bound
    measurements = {"vector_add": measure, "copy": timed("copy", 1000.0, 2.0, 1.98, 2.01, 11)}
    m = benchmark.metric(EX.performance[0], measurements, "")
    assert m.ratio == pytest.approx(0.9) and m.ratio_interval is None


def test_the_message_names_an_interval_that_reaches_across_full_marks():
    def message(fastest_ms):
        """The message of 0.79x copy whose fastest repeats (the interval's low end) took
        fastest_ms against a median of 1 ms."""
        measurements = {"vector_add": timed("vector_add", 790.0, 1.0, fastest_ms, 1.0, 8),
                        "copy": timed("copy", 1000.0, 2.0, 2.0, 2.0, 8)}
        stage = StageResult("benchmark", StageStatus.PASSED)
        stage.metrics = [benchmark.metric(p, measurements, "") for p in EX.performance]
        scoring.grade(EX, [built(), ran_tests(), sanitized(), stage])
        return stage.metrics[0].message

    # An interval up to 0.83x reaches full marks (0.80x): the ratio is within the noise, said.
    assert message(0.95).startswith("0.79x copy (95% interval 0.79-0.83x); full marks at 0.80x")
    # One that stays below full marks is not said.
    assert message(0.999).startswith("0.79x copy; full marks at 0.80x")


def test_verdict_benchmark_problem_gives_no_performance_points():
    bench = benchmarked(status=StageStatus.CRASHED,
                        problem="the benchmark killed by SIGSEGV without finishing its report")
    r = scoring.grade(EX, [built(), ran_tests(), sanitized(), bench])
    assert r.status is ExerciseStatus.PARTIAL and r.score == 60
    assert bench.status is StageStatus.CRASHED
    assert r.message == "bandwidth: the benchmark killed by SIGSEGV without finishing its report"


def test_verdict_full_marks():
    bench = benchmarked(rate=900.0)
    tests = ran_tests()
    r = scoring.grade(EX, [built(), tests, sanitized(), bench])
    assert r.status is ExerciseStatus.PASSED and r.message == "full marks"
    assert r.score == r.max_score == 100
    assert tests.points == 60 and bench.points == 40 and bench.status is StageStatus.PASSED
    assert bench.metrics[0].message == "0.90x copy (full marks at 0.80x)"


def test_verdict_without_benchmark_is_partial():
    r = scoring.grade(EX, [built(), ran_tests(), benchmark.not_run("not run (--no-benchmark)")])
    assert r.status is ExerciseStatus.PARTIAL and r.score == 60
    assert r.message == "not run (--no-benchmark)"


def test_verdict_tests_skipped_without_gpu():
    tests = ran_tests(0, 0, StageStatus.SKIPPED, "no GPU available to run the tests")
    r = scoring.grade(EX, [built(), tests])
    assert r.status is ExerciseStatus.SKIPPED and r.message == tests.message and r.score == 0


def test_verdict_not_submitted_and_not_run(tmp_path):
    r = scoring.score(EX, [], missing=["vector_add.cu"], folder=tmp_path)
    assert r.status is ExerciseStatus.NOT_SUBMITTED and r.stages == []
    assert r.message == f"not submitted: vector_add.cu not found in {tmp_path}"
    r = scoring.not_run(EX, [built()], "compiled (--build-only: not run)")
    assert r.status is ExerciseStatus.SKIPPED and r.score == 0 and r.max_score == 100


@pytest.mark.parametrize("bad_rate", [None, "fast", True, -1.0])
def test_a_measurement_without_a_finite_rate_earns_nothing_and_says_so(bad_rate):
    # The benchmark's JSON writes NaN and infinities as null; a "valid" measurement with such
    # a rate must not crash the grader or be scored.
    measurements = {"vector_add": {"name": "vector_add", "valid": True, "rate": bad_rate},
                    "copy": {"name": "copy", "valid": True, "rate": 1000.0}}
    m = benchmark.metric(EX.performance[0], measurements, "")
    assert m.ratio is None and "no finite rate" in m.message
    baseline_broken = {"vector_add": {"name": "vector_add", "valid": True, "rate": 900.0},
                       "copy": {"name": "copy", "valid": True, "rate": bad_rate}}
    m = benchmark.metric(EX.performance[0], baseline_broken, "")
    assert m.ratio is None and m.message == "baseline copy: no rate"


# ------------------------------------- what a failing exercise's clean stages are (issue 29)
# An untouched skeleton: every case fails, the sanitizer finds nothing over the failing cases,
# and every "calls no ..." technique rule is met. Nothing may read as earned or passed there.

import dataclasses  # noqa: E402

from grader import manifest  # noqa: E402
from grader.model import CaseResult, CaseStatus  # noqa: E402

WITH_RULE = dataclasses.replace(EX, technique=(manifest.Technique(
    name="no_cub", rule="no_library_calls", points=10, value=("cub",)),))


def rules_met():
    return StageResult("technique", StageStatus.PASSED, message="1 of 1 rules met",
                       cases=[CaseResult("no_cub", CaseStatus.PASSED, "expected none; found none")],
                       details={"rules": [{"name": "no_cub", "passed": True, "points": 0.0,
                                           "max_points": 10, "voids": ""}]})


def test_an_untouched_skeleton_earns_nothing_and_nothing_reads_as_passed():
    tests = ran_tests(0, 43)
    sanitizer = sanitized(message="memcheck: clean (6 cases failed under it)")
    technique = rules_met()
    r = scoring.grade(WITH_RULE, [built(), tests, sanitizer, technique])
    assert r.status is ExerciseStatus.FAILED and r.score == 0
    assert r.message == "tests: 0 of 43 cases passed"
    assert technique.points == 0 and technique.details["rules"][0]["points"] == 0
    assert technique.status is StageStatus.NOT_COUNTED
    assert "its 10 points need a correct exercise" in technique.message
    assert sanitizer.status is StageStatus.NOT_COUNTED
    assert "6 did not" in sanitizer.message
    # The rules' own verdicts stand: the rule was met, its points are what is withheld.
    assert technique.cases[0].status is CaseStatus.PASSED


def test_a_not_counted_sanitizer_voids_nothing_the_cases_earned():
    tests = ran_tests(3, 4)
    sanitizer = sanitized(message="memcheck: clean (1 case failed under it)")
    r = scoring.grade(EX, [built(), tests, sanitizer])
    assert sanitizer.status is StageStatus.NOT_COUNTED
    assert tests.points == 45 and r.score == 45 and r.message == "tests: 3 of 4 cases passed"


@pytest.mark.parametrize("passed, message, status", [
    (3, "memcheck: clean", StageStatus.PASSED),  # its cases passed; the failing one is not its
    (4, "memcheck: clean (1 cases failed under it)", StageStatus.PASSED),  # tests pass: kept
])
def test_a_clean_sanitizer_run_stays_passed_where_it_vouches(passed, message, status):
    sanitizer = sanitized(message=message)
    scoring.grade(EX, [built(), ran_tests(passed, 4), sanitizer])
    assert sanitizer.status is status


def test_technique_points_and_a_pass_only_for_a_correct_exercise():
    technique = rules_met()
    r = scoring.grade(WITH_RULE, [built(), ran_tests(), sanitized(), technique, benchmarked()])
    assert technique.status is StageStatus.PASSED and technique.points == 10
    assert r.status is ExerciseStatus.PASSED and r.score == 110
    # Correct but for the sanitizer: not correct, so nothing for the rules.
    technique = rules_met()
    scoring.grade(WITH_RULE, [built(), ran_tests(), sanitized(StageStatus.FAILED, "memcheck "
                              "found 1 error"), technique])
    assert technique.status is StageStatus.NOT_COUNTED and technique.points == 0


def test_build_only_keeps_the_rules_verdicts():
    # --build-only runs nothing, so no points are at stake: the stage says what was met.
    technique = rules_met()
    r = scoring.not_run(WITH_RULE, [built(), technique], "compiled (--build-only: not run)")
    assert technique.status is StageStatus.PASSED and r.score == 0


def test_the_sanitizer_stage_words_what_scoring_reads(monkeypatch, tmp_path):
    """The message sanitizer.py writes for a clean run over failing cases is the one scoring
    recognises (a contract between the two modules)."""
    from grader import tools
    from grader.stages import sanitizer as sanitizer_stage, tests as tests_stage
    from grader.stages.common import GradeOptions
    from helpers import ROOT
    monkeypatch.setattr(tools, "find", lambda name, required_for="": "/bin/true")
    monkeypatch.setattr(tests_stage, "run", lambda *a, **k: StageResult(
        "sanitizer-memcheck", StageStatus.FAILED, output="========= ERROR SUMMARY: 0 errors",
        cases=[CaseResult("S.a", CaseStatus.FAILED), CaseResult("S.b", CaseStatus.FAILED),
               CaseResult("S.c", CaseStatus.PASSED)]))
    options = GradeOptions(root=ROOT, submission=tmp_path, build_dir=tmp_path, seed=1)
    stage = sanitizer_stage.run(options, EX, tmp_path / "vector_add_test")
    assert stage.status is StageStatus.PASSED  # as the stage sees it: nothing found
    scoring.grade(EX, [built(), ran_tests(1, 4), stage])
    assert stage.status is StageStatus.NOT_COUNTED and "2 did not" in stage.message


def test_a_misnamed_file_is_named_when_the_exercise_is_not_submitted(tmp_path):
    (tmp_path / "VectorAdd.cu").write_text("// mine\n")
    (tmp_path / "notes.md").write_text("x")
    r = scoring.score(EX, [], missing=["vector_add.cu"], folder=tmp_path)
    assert r.status is ExerciseStatus.NOT_SUBMITTED
    assert r.message == (f"not submitted: vector_add.cu not found in {tmp_path} "
                         "(VectorAdd.cu is there: rename it vector_add.cu)")
    (tmp_path / "vector-add.cpp").write_text("// mine too\n")
    r = scoring.score(EX, [], missing=["vector_add.cu"], folder=tmp_path)
    assert "(VectorAdd.cu, vector-add.cpp are there: rename one vector_add.cu)" in r.message


def test_score_is_pure_and_decides_every_ending(tmp_path):
    """score() is the one scorer: it leaves the stages it is given as they were, and it ends
    an exercise that was not submitted, not built or not run here as well as a graded one."""
    tests, sanitizer = ran_tests(3, 4), sanitized()
    stages = [built(), tests, sanitizer]
    r = scoring.score(EX, stages)
    assert r.status is ExerciseStatus.FAILED and r.stages[1].points == 45
    assert tests.points == 0 and tests.max_points == 0 and r.stages[1] is not tests
    assert scoring.score(EX, [], missing=["vector_add.cu"], folder=tmp_path).status \
        is ExerciseStatus.NOT_SUBMITTED
    assert scoring.score(EX, [built(StageStatus.FAILED, "no")]).status \
        is ExerciseStatus.COMPILE_ERROR
    refused = StageResult("build", StageStatus.FAILED, message="names /etc/shadow",
                          details={"refused": [{"line": 1}]})
    assert scoring.score(EX, [refused]).status is ExerciseStatus.REJECTED
    assert scoring.score(EX, [built()], not_run="compiled (--build-only: not run)").status \
        is ExerciseStatus.SKIPPED
