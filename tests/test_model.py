"""grader.model: status enums, Report.from_dict and Report.load."""

from __future__ import annotations

import json

import pytest

from grader import model, render
from grader.errors import GraderError
from grader.model import CaseStatus, ExerciseStatus, StageStatus
from helpers import sample_report

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template


def test_from_dict_round_trip():
    report = sample_report()
    data = report.to_dict()
    again = model.Report.from_dict(data)
    assert again.to_dict() == data
    assert again.score == report.score and again.percent == report.percent


def test_load_round_trip_through_json(tmp_path):
    report = sample_report()
    path = tmp_path / "report.json"
    render.write_json(report, path)
    assert model.Report.load(path).to_dict() == report.to_dict()


def test_loaded_statuses_are_enums(tmp_path):
    path = tmp_path / "report.json"
    render.write_json(sample_report(), path)
    loaded = model.Report.load(path)
    crashed = loaded.exercises[2]
    assert crashed.status is ExerciseStatus.CRASHED
    assert crashed.stage("tests").status is StageStatus.CRASHED
    assert [c.status for c in crashed.stage("tests").cases] == [
        CaseStatus.PASSED, CaseStatus.FAILED, CaseStatus.CRASHED, CaseStatus.NOT_RUN]
    assert all(type(c.status) is CaseStatus for c in crashed.stage("tests").cases)


def test_enums_serialise_as_plain_strings():
    text = json.dumps(sample_report().to_dict())
    assert "Status" not in text
    data = json.loads(text)
    four = data["exercises"][3]
    assert four["status"] == "compile_error" and type(four["status"]) is str
    assert four["stages"][0]["status"] == "failed"
    three = data["exercises"][2]
    assert [c["status"] for c in three["stages"][2]["cases"]] == [
        "passed", "failed", "crashed", "not_run"]


def test_statuses_are_their_strings():
    assert ExerciseStatus.EXITED_EARLY == "exited_early"
    assert f"{StageStatus.TIMED_OUT}" == "timed_out" and str(CaseStatus.NOT_RUN) == "not_run"
    assert [s.value for s in ExerciseStatus] == [
        "passed", "partial", "failed", "not_submitted", "compile_error", "crashed",
        "timed_out", "exited_early", "skipped", "unchecked", "rejected", "incomplete"]


def test_built_from_strings_holds_enums():
    stage = model.StageResult("tests", "timed_out", cases=[model.CaseResult("S.a", "passed")])
    assert stage.status is StageStatus.TIMED_OUT
    assert stage.cases[0].status is CaseStatus.PASSED


@pytest.mark.parametrize("make", [
    lambda: model.CaseResult("S.a", "ok"),
    lambda: model.StageResult("tests", "partial"),  # an exercise status, not a stage's
    lambda: model.ExerciseResult("k", "n", "c", "t", "error", 0.0, 0.0),
])
def test_unknown_status_is_refused(make):
    with pytest.raises(ValueError):
        make()


@pytest.mark.parametrize("change, fragment", [
    (lambda d: d.pop("exercises"), "no 'exercises'"),
    (lambda d: d.pop("seed"), "seed"),
    (lambda d: d["exercises"][0].update(status="great"), "'great' is not a valid ExerciseStatus"),
    (lambda d: d["exercises"][0]["stages"][0].update(status="fine"), "StageStatus"),
    (lambda d: d["exercises"][2]["stages"][2]["cases"][0].update(status="ok"), "CaseStatus"),
    (lambda d: d["exercises"][0]["stages"][3]["metrics"][0].pop("ratio"), "ratio"),
    (lambda d: d["exercises"][0].update(colour="red"), "colour"),
    (lambda d: d.update(gpu="Fake GPU"), "not a grader report"),
])
def test_from_dict_errors(change, fragment):
    data = sample_report().to_dict()
    change(data)
    with pytest.raises(GraderError, match="not a grader report") as error:
        model.Report.from_dict(data)
    assert fragment in str(error.value)
    assert "\n" not in str(error.value)


def test_from_dict_ignores_the_derived_totals():
    data = sample_report().to_dict()
    data.update(score=1.0, max_score=2.0, percent=3.0)
    assert model.Report.from_dict(data).score == 200


@pytest.mark.parametrize("content, fragment", [
    (None, "does not exist"),
    ("{torn", "is not JSON"),
    (b"\xff\xfe\x00binary", "is not JSON"),
    ("[1, 2]", "not a grader report"),
    ('{"exercises": []}', "not a grader report"),
])
def test_load_errors_are_one_line_naming_the_file(tmp_path, content, fragment):
    path = tmp_path / "report.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(GraderError) as error:
        model.Report.load(path)
    message = str(error.value)
    assert fragment in message and str(path) in message and "\n" not in message


def test_load_a_directory(tmp_path):
    with pytest.raises(GraderError, match="cannot be read"):
        model.Report.load(tmp_path)


def test_stage_names_and_typed_details():
    """A stage's name is a StageName and its details the stage's own dataclass, read like the
    dict reports hold; only the keys that were set are written, in the order they were set."""
    tests = model.StageResult("tests", StageStatus.PASSED, details={"passed": 1, "total": 2})
    assert tests.name is model.StageName.TESTS and isinstance(tests.details, model.TestsDetails)
    assert tests.details.passed == tests.details["passed"] == 1 and "exit" not in tests.details
    tests.details.among_others = "failed"
    tests.details.failure_kinds.add(model.FailureKind.OUT_OF_MEMORY)  # never written
    assert tests.details.to_dict() == {"passed": 1, "total": 2, "among_others": "failed"}
    assert list(tests.details) == ["passed", "total", "among_others"]
    with pytest.raises(KeyError):
        tests.details["no_such_detail"] = 1
    bench = model.StageResult("benchmark", StageStatus.NOT_MEASURED,
                              details=model.BenchmarkDetails(disturbed="x", attempts=3))
    assert list(bench.details.to_dict()) == ["disturbed", "attempts"]
    technique = model.StageResult("technique", StageStatus.PASSED)
    technique.details["rules"] = [{"name": "r", "passed": True}]  # as technique.py fills it
    assert technique.details.rules == [{"name": "r", "passed": True}]


def test_a_report_with_details_no_field_names_loads_and_keeps_them():
    data = sample_report().to_dict()
    data["exercises"][0]["stages"][0]["details"] = {"future_key": [1], "commands": ["nvcc"]}
    again = model.Report.from_dict(data)
    assert again.exercises[0].stages[0].details.commands == ["nvcc"]
    assert again.to_dict()["exercises"][0]["stages"][0]["details"] == {
        "future_key": [1], "commands": ["nvcc"]}
