"""scripts/check_profile.py, the verdict of gpu_check's profile stage, on reports made here: the
solutions pass only when every profile stage passed with comparisons and full marks kept; a
fixture passes only when the counter that explains it came out worse than the reference's."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from grader import model
from grader.model import ExerciseStatus, StageName, StageStatus
from helpers import ROOT

_spec = importlib.util.spec_from_file_location("check_profile",
                                               ROOT / "scripts" / "check_profile.py")
check_profile = importlib.util.module_from_spec(_spec)
sys.modules["check_profile"] = check_profile
_spec.loader.exec_module(check_profile)


def comparison(counter: str, verdict: str) -> dict:
    return {"measure": "m", "counter": counter, "title": counter, "unit": "", "student": 2.0,
            "reference": 1.0, "baseline": None, "better": "lower", "verdict": verdict,
            "sentence": ""}


def exercise(name: str, score: float, profile: model.StageResult | None) -> model.ExerciseResult:
    stages = [model.StageResult(StageName.BUILD, StageStatus.PASSED)]
    if profile is not None:
        stages.append(profile)
    status = ExerciseStatus.PASSED if score == 100 else ExerciseStatus.PARTIAL
    return model.ExerciseResult(f"ch/{name}", name, "ch", name, status, score, 100.0, "", stages)


def profiled(status=StageStatus.PASSED, comparisons=(), message="") -> model.StageResult:
    return model.StageResult(StageName.PROFILE, status, duration_s=3.0, message=message,
                             details={"comparisons": list(comparisons), "added_s": 3.0})


def report(*exercises) -> model.Report:
    return model.Report("solutions", 1, "2026-11-27T00:00:00", exercises=list(exercises))


def test_the_solutions_pass_with_every_profile_passed_and_full_marks(capsys):
    good = profiled(comparisons=[comparison("c", "same")])
    assert check_profile.check_solutions(report(exercise("a", 100, good),
                                                exercise("b", 100, None))) == []
    assert "1 exercises profiled, 3.0 s of profiling" in capsys.readouterr().out


@pytest.mark.parametrize("bad, says", [
    (exercise("a", 100, profiled(StageStatus.ERROR, message="ncu exit status 1")),
     "profile error: ncu exit status 1"),
    (exercise("a", 100, profiled()), "profile passed with no comparison"),
    (exercise("a", 90, profiled(comparisons=[comparison("c", "same")])), "90/100 with --profile"),
])
def test_the_solutions_fail_naming_what_went_wrong(bad, says):
    problems = check_profile.check_solutions(report(bad))
    assert any(says in p for p in problems), problems
    assert check_profile.check_solutions(report(exercise("a", 100, None))) == \
        ["no exercise has a profile stage"]


def test_a_fixture_passes_only_when_its_explaining_counter_is_worse():
    name = "ch04_transpose_unpadded"
    exercise_name, counter = check_profile.EXPLAINED_BY[name]
    worse = report(exercise(exercise_name, 76.9, profiled(comparisons=[
        comparison(counter, "worse"), comparison("global_sectors_per_request", "same")])))
    assert check_profile.check_fixture(name, worse) == []
    same = report(exercise(exercise_name, 76.9, profiled(comparisons=[
        comparison(counter, "same"), comparison("global_sectors_per_request", "worse")])))
    assert check_profile.check_fixture(name, same) == \
        [f"{name}: {counter} is not worse than the reference's"]
    missing = report(exercise(exercise_name, 76.9, None))
    assert "has no profile stage" in check_profile.check_fixture(name, missing)[0]
    assert check_profile.check_fixture("ch01_unknown", worse) == \
        ["no counter is expected for fixture ch01_unknown"]


def test_each_explaining_counter_is_declared_by_its_exercise():
    from grader import manifest
    by_name = {ex.name: ex for ex in manifest.discover(ROOT)}
    for fixture, (exercise_name, counter) in check_profile.EXPLAINED_BY.items():
        assert (ROOT / "tests" / "fixtures" / "submissions" / fixture).is_dir(), fixture
        assert counter in by_name[exercise_name].profile_counters, (fixture, counter)


def test_bad_arguments_exit_2(capsys):
    assert check_profile.main([]) == 2
    assert check_profile.main(["solutions", str(ROOT / "no-such-report.json")]) == 2
    assert "check_profile:" in capsys.readouterr().err
