"""grader/exports.py: each platform's format checked against its published field list, for a
full-marks, a crashed and a compile-error report (sample_report has each kind), and against its
size limits for a whole course of skeletons; the Gradescope autograder zip, gradescope-run and
prairielearn-run (a results file whatever happens); the GitHub Classroom workflow and points,
run through a model of the grading reporter's arithmetic (and the reporter itself under Node,
where COURSE_CLASSROOM_REPORTER names its dist/main.js)."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import random
import re
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from grader import exports, manifest, model, render, template, tools
from grader.errors import GraderError
from grader.model import ExerciseStatus
from helpers import (PYTHON, ROOT, assert_one_line_error, needs_solutions, run_cli,
                     sample_report)

NUMBER = (int, float)


def _bad_type(where: str, value, types) -> list[str]:
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in
                                           (types if isinstance(types, tuple) else (types,)))
    return [] if ok else [f"{where}: {type(value).__name__} is not {types}"]


def _check_fields(where: str, data: dict, fields: dict, required=()) -> list[str]:
    """fields: name -> allowed types, or a tuple of allowed string values."""
    problems = [f"{where}: {name} is required" for name in required if name not in data]
    for name, value in data.items():
        if name not in fields:
            problems.append(f"{where}: unknown field {name}")
        elif isinstance(fields[name], tuple) and fields[name] and \
                isinstance(fields[name][0], str):
            if value not in fields[name]:
                problems.append(f"{where}: {name} = {value!r} is not one of {fields[name]}")
        else:
            problems += _bad_type(f"{where}.{name}", value, fields[name])
    return problems


# Gradescope, https://gradescope-autograders.readthedocs.io/en/latest/specs/ ("Output format",
# "Test case status", "Output String Formatting", visibility) and .../leaderboards/.
VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")
FORMATS = ("text", "html", "simple_format", "md", "ansi")
GRADESCOPE = {"score": NUMBER, "execution_time": int, "output": str, "output_format": FORMATS,
              "test_output_format": FORMATS, "test_name_format": FORMATS,
              "visibility": VISIBILITY, "stdout_visibility": VISIBILITY, "extra_data": dict,
              "tests": list, "leaderboard": list}
GRADESCOPE_TEST = {"score": NUMBER, "max_score": NUMBER, "status": ("passed", "failed"),
                   "name": str, "name_format": FORMATS, "number": str, "output": str,
                   "output_format": FORMATS, "tags": list, "visibility": VISIBILITY,
                   "extra_data": dict}
GRADESCOPE_LEADERBOARD = {"name": str, "value": (int, float, str), "order": ("asc", "desc")}


def gradescope_problems(data: dict) -> list[str]:
    problems = _check_fields("results", data, GRADESCOPE)
    tests = data.get("tests", [])
    # "score: optional, but required if not on each test case"
    if "score" not in data and not all("score" in t for t in tests):
        problems.append("results: score is required when a test has none")
    for i, test in enumerate(tests):
        problems += _check_fields(f"tests[{i}]", test, GRADESCOPE_TEST)
    for i, entry in enumerate(data.get("leaderboard", [])):
        problems += _check_fields(f"leaderboard[{i}]", entry, GRADESCOPE_LEADERBOARD,
                                  required=("name", "value"))
    return problems


# PrairieLearn, https://prairielearn.readthedocs.io/en/latest/externalGrading/#grading-results
PRAIRIELEARN = {"gradable": bool, "score": NUMBER, "format_errors": (str, list),
                "message": str, "output": str, "images": list, "tests": list}
PRAIRIELEARN_TEST = {"name": str, "description": str, "points": NUMBER, "max_points": NUMBER,
                     "message": str, "output": str, "images": list}


def prairielearn_problems(data: dict) -> list[str]:
    gradable = data.get("gradable", True)
    problems = _check_fields("results", data, PRAIRIELEARN,
                             required=("score",) if gradable else ())
    if gradable and not 0.0 <= data.get("score", -1) <= 1.0:
        problems.append(f"results: score {data.get('score')} is not in [0, 1]")
    if not gradable and not data.get("format_errors"):
        problems.append("results: not gradable, but no format_errors say why")
    for i, test in enumerate(data.get("tests", [])):
        problems += _check_fields(f"tests[{i}]", test, PRAIRIELEARN_TEST, required=("name",))
    if len((json.dumps(data, indent=2) + "\n").encode()) > 1_000_000:  # "limited to 1 MB"
        problems.append("results: over 1 MB")
    return problems


# GitHub Classroom: what classroom-resources/autograding-grading-reporter reads from
# <ID>_RESULTS (src/main.js, aggregate-results.js, notify-classroom.js, console-results.js).
CLASSROOM = {"version": int, "status": ("pass", "fail", "error"), "max_score": NUMBER,
             "tests": list}
CLASSROOM_TEST = {"name": str, "status": ("pass", "fail", "error"), "score": NUMBER,
                  "message": str, "line_no": int}


def classroom_problems(data: dict) -> list[str]:
    problems = _check_fields("result", data, CLASSROOM, required=("status", "max_score",
                                                                    "tests"))
    for i, test in enumerate(data.get("tests", [])):
        problems += _check_fields(f"tests[{i}]", test, CLASSROOM_TEST,
                                  required=("name", "status", "score"))
    if sum(t.get("score", 0) for t in data.get("tests", [])) > data.get("max_score", 0) + 1e-9:
        problems.append("result: the tests' scores add up to more than max_score")
    if not data.get("tests"):  # the reporter divides by their number
        problems.append("result: no tests")
    return problems


def only(status: ExerciseStatus) -> model.Report:
    report = sample_report()
    report.exercises = [e for e in report.exercises if e.status == status]
    assert len(report.exercises) == 1
    return report


def course_report(kind: str, seed: int = 7) -> model.Report:
    """A report of the whole course as its manifests stand: 'skeletons' (an untouched
    workspace: every exercise fails each of its many cases, with long outputs, as the
    skeletons' test programs print them), 'solutions' (full marks) or 'partial' (scores with
    fractions, as the performance points give)."""
    C, S = model.CaseResult, model.StageResult
    rng = random.Random(seed)
    exercises = []
    for ex in manifest.discover(ROOT):
        if kind == "solutions":
            exercises.append(model.ExerciseResult(
                ex.key, ex.name, ex.chapter, ex.title, ExerciseStatus.PASSED, ex.max_points,
                ex.max_points, "full marks", [S("build", "passed"), S("tests", "passed")]))
            continue
        if kind == "partial":
            score = round(rng.uniform(0, ex.max_points), 3)
            exercises.append(model.ExerciseResult(
                ex.key, ex.name, ex.chapter, ex.title, ExerciseStatus.PARTIAL, score,
                ex.max_points, "bandwidth: 0.61x copy", [S("build", "passed")]))
            continue
        cases = [C(f"{ex.name.title()}Test.Case{i}", "failed",
                   f"expected 1.5 at index {i}, got 0 (the kernel is a TODO)")
                 for i in range(60)]
        output = "\n".join(f"[ RUN      ] {ex.name}.Case{i}\n" + "value mismatch " * 20
                           for i in range(60))
        exercises.append(model.ExerciseResult(
            ex.key, ex.name, ex.chapter, ex.title, ExerciseStatus.FAILED, 0.0, ex.max_points,
            "tests: 0 of 60 cases passed",
            [S("build", "passed"),
             S("tests", "failed", 0, 60, 1.0, "0 of 60 cases passed", output=output,
               cases=cases),
             S("sanitizer", "not_counted", output=output)]))
    return model.Report(submission="/work/workspace", seed=1,
                        started_at="2025-01-01T00:00:00+00:00",
                        finished_at="2025-01-01T00:03:00+00:00", grader_version="1",
                        gpu=model.GpuInfo("Fake GPU", "9.0", "555", 80000), host="h",
                        options={"build_only": False}, exercises=exercises)


KINDS = {"full_marks": ExerciseStatus.PASSED, "crashed": ExerciseStatus.CRASHED,
         "compile_error": ExerciseStatus.COMPILE_ERROR}


def test_the_checkers_catch_bad_results():
    assert gradescope_problems({"tests": [{"status": "ok", "score": "1"}]})
    assert gradescope_problems({"score": 1, "leaderboard": [{"value": 1, "order": "up"}]})
    assert prairielearn_problems({"score": 1.5})
    assert prairielearn_problems({"gradable": False})
    assert classroom_problems({"status": "pass", "max_score": 1,
                               "tests": [{"name": "a", "status": "pass", "score": 2}]})


# ------------------------------------------------------------------------------ Gradescope

@pytest.mark.parametrize("kind", KINDS)
def test_gradescope_results(kind):
    report = only(KINDS[kind])
    data = exports.gradescope(report)
    assert gradescope_problems(data) == []
    (test,) = data["tests"]
    ex = report.exercises[0]
    assert test["name"].startswith(ex.key) and test["max_score"] == ex.max_score
    assert data["score"] == test["score"] == ex.score
    assert test["status"] == ("passed" if kind == "full_marks" else "failed")
    assert data["execution_time"] == 60
    if kind == "compile_error":
        assert "error: x" in test["output"]  # the compiler's message
    if kind == "crashed":
        assert "S.c [crashed]" in test["output"] and "SIGSEGV" in test["output"]
    leaderboard = data["leaderboard"]
    assert leaderboard == ([{"name": "one bandwidth", "value": 0.9, "order": "desc"}]
                           if kind == "full_marks" else [])


def test_gradescope_whole_report():
    data = exports.gradescope(sample_report())
    assert gradescope_problems(data) == []
    assert data["score"] == 200 and sum(t["max_score"] for t in data["tests"]) == 350
    assert [t["status"] for t in data["tests"]] == ["passed"] + ["failed"] * 4
    assert "\033[" not in data["output"] and "200.0/350.0" in data["output"]


# ---------------------------------------------------------------------------- PrairieLearn

@pytest.mark.parametrize("kind", KINDS)
def test_prairielearn_results(kind):
    report = only(KINDS[kind])
    data = exports.prairielearn(report)
    assert prairielearn_problems(data) == []
    if kind == "compile_error":
        assert data["gradable"] is False and "score" not in data
        assert data["format_errors"] == ["ch02_b/four: compilation failed"]
        assert "did not compile" in data["message"] and "error: x" in data["output"]
    else:
        assert data["gradable"] is True
        assert data["score"] == {"full_marks": 1.0, "crashed": round(20 / 60, 4)}[kind]
    (test,) = data["tests"]
    assert test["points"] == report.exercises[0].score
    assert test["max_points"] == report.exercises[0].max_score


def test_prairielearn_a_compile_error_anywhere_makes_it_not_gradable():
    data = exports.prairielearn(sample_report())
    assert prairielearn_problems(data) == []
    assert data["gradable"] is False and len(data["tests"]) == 5


def test_prairielearn_a_whole_course_of_skeletons_stays_far_under_the_limit():
    report = course_report("skeletons")
    whole = exports.prairielearn(report, budget=10**9)  # nothing cut
    assert exports.encoded_size(whole) > exports.PRAIRIELEARN_LIMIT  # what the grader host refused
    data = exports.prairielearn(report)
    assert prairielearn_problems(data) == []
    assert exports.encoded_size(data) <= exports.PRAIRIELEARN_BUDGET
    assert data["gradable"] is True and data["score"] == 0
    # Every exercise keeps its line and its points; the cut outputs say where the rest is.
    assert [(t["name"], t["points"], t["max_points"]) for t in data["tests"]] == \
        [(e.key, 0.0, e.max_score) for e in report.exercises]
    assert all(exports.PRAIRIELEARN_CUT in t["output"] for t in data["tests"])
    assert all(t["output"].startswith(f"{e.key}: failed, 0/") for t, e in
               zip(data["tests"], report.exercises))


def test_prairielearn_cuts_outputs_then_messages_then_the_top_output():
    report = only(ExerciseStatus.CRASHED)
    (ex,) = report.exercises
    ex.message = "m" * 30000
    ex.stages[2].output = "o" * 30000
    data = exports.prairielearn(report)
    room = exports.encoded_size(data)
    # A budget that the outputs alone cannot meet: the messages go next, the top output last.
    tight = exports.prairielearn(report, budget=room - 20000)
    assert exports.encoded_size(tight) <= room - 20000
    assert len(tight["tests"][0]["output"]) < 400
    assert len(tight["tests"][0]["message"]) < len(data["tests"][0]["message"])
    assert tight["output"] == data["output"]  # not needed yet
    tighter = exports.prairielearn(report, budget=3000)
    assert exports.encoded_size(tighter) <= 3000 and exports.PRAIRIELEARN_CUT in tighter["output"]
    assert tighter["score"] == data["score"]


def test_prairielearn_holds_any_number_of_exercises():
    report = only(ExerciseStatus.COMPILE_ERROR)
    (ex,) = report.exercises
    report.exercises = [dataclasses.replace(ex, key=f"ch02_b/{i:05d}" + "k" * 200)
                        for i in range(3000)]
    data = exports.prairielearn(report)
    assert exports.encoded_size(data) <= exports.PRAIRIELEARN_BUDGET
    assert prairielearn_problems(data) == [] and data["gradable"] is False
    assert "more exercises not listed" in data["tests"][-1]["description"]


def test_prairielearn_an_incomplete_grade_is_not_gradable():
    report = only(ExerciseStatus.PASSED)
    report.exercises[0].status = ExerciseStatus.INCOMPLETE
    data = exports.prairielearn(report)
    assert prairielearn_problems(data) == [] and data["gradable"] is False
    assert "GPU busy" in data["format_errors"][0] and "submit again" in data["message"]


def test_prairielearn_failure_says_why():
    data = exports.prairielearn_failure("no NVIDIA GPU found " + "x" * 10000)
    assert prairielearn_problems(data) == [] and data["gradable"] is False
    assert data["format_errors"][0].startswith("no NVIDIA GPU found")
    assert exports.encoded_size(data) < 20000


# -------------------------------------------------------------------------- CLI: the flags

def test_render_writes_every_export(tmp_path):
    saved = tmp_path / "report.json"
    render.write_json(sample_report(), saved)
    gs, pl = tmp_path / "gs" / "results.json", tmp_path / "pl" / "results.json"
    result = run_cli("render", saved, "--gradescope", gs, "--prairielearn", pl)
    assert result.returncode == 0, result.stderr
    assert gradescope_problems(json.loads(gs.read_text())) == []
    assert prairielearn_problems(json.loads(pl.read_text())) == []
    assert json.loads(gs.read_text()) == exports.gradescope(model.Report.load(saved))


@pytest.mark.parametrize("command", ["grade", "render"])
def test_an_export_onto_a_folder_is_refused_first(tmp_path, command):
    saved = tmp_path / "report.json"
    render.write_json(sample_report(), saved)
    args = ["skeletons", "--build-only"] if command == "grade" else [saved]
    result = run_cli(command, *args, "--gradescope", tmp_path)
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "--gradescope", "is a folder")


# ------------------------------------------------------------------ Gradescope autograder

@pytest.fixture(scope="module")
def autograder(tmp_path_factory) -> tuple[Path, Path]:
    """The zip export-gradescope writes, and the folder it unpacks to (/autograder/source)."""
    folder = tmp_path_factory.mktemp("gradescope")
    archive = folder / "autograder.zip"
    result = run_cli("export-gradescope", archive)
    assert result.returncode == 0, result.stderr
    return archive, unpack_zip(archive, folder / "source")


def unpack_zip(archive: Path, folder: Path) -> Path:
    """The zip unpacked into folder as Gradescope unpacks it, with its permission bits."""
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(folder)
        for info in zf.infolist():  # extractall drops the permission bits
            mode = info.external_attr >> 16
            if mode:
                os.chmod(folder / info.filename, stat.S_IMODE(mode))
    return folder


@needs_solutions
def test_gradescope_zip_contents(autograder):
    archive, _ = autograder
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        run = zf.read("run_autograder").decode()
    # The spec: setup.sh and run_autograder at the root of the archive.
    assert {"setup.sh", "run_autograder", template.MARKER, "grader/cli.py", "meson.build",
            "chapters/ch01_programming_model/vector_add/vector_add.toml",
            "skeletons/ch01_programming_model/vector_add.cu"} <= names
    assert not [n for n in names if n.startswith(("solutions/", "tests/fixtures/submissions/"))
                or template.excluded(n)]
    assert all(modes[n] & 0o111 for n in ("setup.sh", "run_autograder"))
    assert setup.startswith("#!/usr/bin/env bash") and "GPU" in setup and "CUDA" in setup
    assert "scripts/setup.sh" in setup
    assert "gradescope-run" in run and "/autograder/submission" in run
    assert "/autograder/results/results.json" in run


def fake_grade(seen: list):
    def grade(submission: Path) -> model.Report:
        seen.append(sorted(p.relative_to(submission).as_posix()
                           for p in submission.rglob("*") if p.is_file()))
        return sample_report()
    return grade


@needs_solutions
@pytest.mark.parametrize("layout, placed", [
    ({"vector_add.cu": "mine", "notes.txt": "x"},                          # loose files
     ["ch01_programming_model/vector_add.cu"]),
    ({"workspace/ch01_programming_model/vector_add.cu": "mine",            # a whole workspace
      "workspace/ch02_execution_model/reduce_v1_neighbored.cu": "x"},
     ["ch01_programming_model/vector_add.cu", "ch02_execution_model/reduce_v1_neighbored.cu"]),
    ({"a/vector_add.cu": "old", "z/ch01_programming_model/vector_add.cu": "mine",
      "__MACOSX/ch01_programming_model/vector_add.cu": "junk"},          # chapter folder wins
     ["ch01_programming_model/vector_add.cu"]),
])
def test_gradescope_run_places_the_upload_and_writes_results(autograder, tmp_path, layout,
                                                              placed):
    _, source = autograder
    upload = tmp_path / "submission"
    for rel, text in layout.items():
        (upload / rel).parent.mkdir(parents=True, exist_ok=True)
        (upload / rel).write_text(text)
    results = tmp_path / "results" / "results.json"
    seen: list = []
    data = exports.gradescope_run(source, upload, results, tmp_path / "work", fake_grade(seen))
    assert seen == [placed]
    assert (tmp_path / "work" / "submission" / placed[0]).read_text() == "mine"
    assert json.loads(results.read_text()) == data == exports.gradescope(sample_report())
    assert gradescope_problems(data) == []


@needs_solutions
def test_gradescope_run_without_files_or_without_a_grader(autograder, tmp_path):
    _, source = autograder
    (tmp_path / "empty").mkdir()
    results = tmp_path / "results.json"
    data = exports.gradescope_run(source, tmp_path / "empty", results, tmp_path / "w",
                                  fake_grade([]))
    assert gradescope_problems(data) == [] and data["score"] == 0
    assert "No exercise files found" in data["output"]

    (tmp_path / "up").mkdir()
    (tmp_path / "up" / "vector_add.cu").write_text("mine")

    def broken(_: Path):
        raise GraderError("no NVIDIA GPU found")
    data = exports.gradescope_run(source, tmp_path / "up", results, tmp_path / "w", broken)
    assert data["output"] == "The grader could not run: no NVIDIA GPU found"
    assert json.loads(results.read_text()) == data


@needs_solutions
@pytest.mark.skipif(tools.query_gpu() is not None, reason="with a GPU this would grade for real")
def test_gradescope_run_command_without_a_gpu(autograder, tmp_path):
    """run_autograder's command, as it runs there, on this machine without a GPU: the results
    say why nothing was graded."""
    _, source = autograder
    (tmp_path / "up").mkdir()
    (tmp_path / "up" / "vector_add.cu").write_text("// mine\n")
    results = tmp_path / "results" / "results.json"
    result = run_cli("gradescope-run", "--upload", tmp_path / "up", "--results", results,
                     cwd=source)
    assert result.returncode == 0, result.stderr
    data = json.loads(results.read_text())
    assert gradescope_problems(data) == []
    assert data["score"] == 0 and "no NVIDIA GPU found" in data["output"]


@needs_solutions
@pytest.mark.parametrize("trouble, said", [
    (GraderError("no NVIDIA GPU found"), "The grader could not run: no NVIDIA GPU found"),
    (PermissionError(13, "Permission denied", "/autograder/submission/x.cu"),
     "The grader could not run: /autograder/submission/x.cu (Permission denied)"),
    (KeyError("stages"), "The grader failed: KeyError: 'stages'"),
])
def test_gradescope_run_writes_a_zero_whatever_stops_the_grade(autograder, tmp_path, trouble,
                                                                said, capsys):
    _, source = autograder
    (tmp_path / "up").mkdir()
    (tmp_path / "up" / "vector_add.cu").write_text("mine")

    def grade(_: Path):
        raise trouble
    results = tmp_path / "results.json"
    data = exports.gradescope_run(source, tmp_path / "up", results, tmp_path / "w", grade)
    assert gradescope_problems(data) == [] and data["score"] == 0
    assert data["output"] == said and json.loads(results.read_text()) == data
    # A grader bug leaves its trace in the platform's log, for the instructor.
    assert ("Traceback" in capsys.readouterr().err) == isinstance(trouble, KeyError)


# ------------------------------------------------------------------ PrairieLearn's runner

def test_prairielearn_run_places_the_files_and_writes_results(tmp_path):
    student = tmp_path / "grade" / "student"
    student.mkdir(parents=True)
    (student / "vector_add.cu").write_text("mine")
    (student / "notes.txt").write_text("x")
    results = tmp_path / "grade" / "results" / "results.json"
    seen: list = []
    data = exports.prairielearn_run(ROOT, student, results, tmp_path / "work", fake_grade(seen),
                                    ["vector_add"])
    assert seen == [["ch01_programming_model/vector_add.cu"]]
    assert json.loads(results.read_text()) == data == exports.prairielearn(sample_report())
    assert prairielearn_problems(data) == []


@pytest.mark.parametrize("files, trouble, said", [
    ({}, None, "No exercise files found in your upload (e.g. vector_add.cu)"),
    ({"vector_add.cu": "mine"}, GraderError("no NVIDIA GPU found"),
     "The grader could not run: no NVIDIA GPU found"),
    ({"vector_add.cu": "mine"}, GraderError("the sandbox is unavailable: no Landlock"),
     "The grader could not run: the sandbox is unavailable: no Landlock"),
    ({"vector_add.cu": "mine"}, ValueError("a bug"), "The grader failed: ValueError: a bug"),
])
def test_prairielearn_run_is_not_gradable_when_it_cannot_grade(tmp_path, files, trouble, said):
    student = tmp_path / "student"
    student.mkdir()
    for name, text in files.items():
        (student / name).write_text(text)

    def grade(_: Path):
        raise trouble
    results = tmp_path / "results.json"
    data = exports.prairielearn_run(ROOT, student, results, tmp_path / "w", grade, ["vector_add"])
    assert prairielearn_problems(data) == [] and data["gradable"] is False
    assert data["format_errors"][0].startswith(said) and said in data["message"]
    assert json.loads(results.read_text()) == data


@pytest.mark.skipif(tools.query_gpu() is not None, reason="with a GPU this would grade for real")
def test_prairielearn_run_command_without_a_gpu(tmp_path):
    """The entrypoint's command, as it runs in a grading container, on this machine without a
    GPU: exit 0 and a results.json that is not gradable and says why."""
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "vector_add.cu").write_text("// mine\n")
    results = tmp_path / "results" / "results.json"
    result = run_cli("prairielearn-run", "--student", tmp_path / "student", "--results", results,
                     "-e", "vector_add")
    assert result.returncode == 0, result.stderr
    data = json.loads(results.read_text())
    assert prairielearn_problems(data) == [] and data["gradable"] is False
    assert "no NVIDIA GPU found" in data["format_errors"][0]
    assert "not gradable" in result.stderr and "Traceback" not in result.stderr


@needs_solutions
def test_export_gradescope_refuses_a_folder(tmp_path):
    result = run_cli("export-gradescope", tmp_path)
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "is a folder")


# -------------------------------------------------------------------------- GitHub Classroom
# A model of what classroom-resources/autograding-grading-reporter v1 does with the results,
# from its source: src/main.js (each runner's <ID>_RESULTS, base64 JSON), src/notify-
# classroom.js (the points sent: every test's score added up, over the runners' max_score
# added up, runners without max_score left out), and dist/main.js near its end (getTestScore:
# tests passed / tests x max_score; ConsoleResults prints it per runner with toFixed(2), and
# its table's Total row adds them up). Python's floats are IEEE doubles as JavaScript's
# numbers are, and the model adds in the reporter's order, so its sums are the reporter's.

def reporter_input(env: dict, runners: str) -> list[tuple[str, dict]]:
    return [(r, json.loads(base64.b64decode(env[f"{r.strip().upper()}_RESULTS"]).decode()))
            for r in runners.split(",")]


def get_test_score(results: dict) -> float:
    passed = 0
    for test in results["tests"]:
        if test["status"] == "pass":
            passed += 1
    return passed / len(results["tests"]) * (results.get("max_score") or 0)


def console_totals(runs) -> tuple[float, float]:
    """The log's Test runner summary, its Total row: each runner's getTestScore, added."""
    score, top = 0, 0
    for _, results in runs:
        score += get_test_score(results)
    for _, results in runs:
        top += results.get("max_score") or 0
    return score, top


def points_sent(runs) -> tuple[float, float]:
    """NotifyClassroom's totalPoints and maxPoints: what reaches Classroom."""
    total, top = 0, 0
    for _, results in runs:
        if not results.get("max_score"):
            continue
        top += results["max_score"]
        for test in results["tests"]:
            total += test["score"]
    return total, top


def decode(line: str, key: str) -> dict:
    name, _, value = line.partition("=")
    assert name == key
    return json.loads(base64.b64decode(value))


def test_one_runner_per_chapter_printed_other_totals_than_it_sent():
    # The workflow before: one runner per chapter, a test per exercise with its points. The
    # log printed tests passed / tests x max_score: here 120 of 240, where 180 were sent.
    runs = [("ch01", {"max_score": 240, "tests": [
        {"status": "pass", "score": 60}, {"status": "pass", "score": 60},
        {"status": "fail", "score": 40}, {"status": "fail", "score": 20}]})]
    assert console_totals(runs) == (120, 240) and points_sent(runs) == (180, 240)


def test_whole_points_add_up_to_the_rounded_sum():
    assert exports.whole_points([10.4, 10.4, 10.4]) == [11, 10, 10]  # 31.2 -> 31
    assert exports.whole_points([0.5, 0.5]) == [1, 0]                 # 1.0
    assert exports.whole_points([2.5]) == [3]                         # halves up
    assert exports.whole_points([59.9996, 0.0004]) == [60, 0]
    rng = random.Random(3)
    for _ in range(200):
        scores = [round(rng.uniform(0, 100), 3) for _ in range(rng.randint(1, 13))]
        points = exports.whole_points(scores)
        assert sum(points) == int(sum(scores) + 0.5)
        assert all(abs(p - s) < 1 for p, s in zip(points, scores))


def test_classroom_points_per_chapter():
    report = sample_report()
    earned, missed = exports.classroom_results(report, "ch01_a", 200)
    assert classroom_problems(earned) == [] and classroom_problems(missed) == []
    assert earned["max_score"] == 180 and missed["max_score"] == 20
    assert [(t["status"], t["score"]) for t in earned["tests"]] == \
        [("pass", 0), ("pass", 100), ("pass", 80)]
    assert earned["tests"][0]["name"].startswith("ch01_a: 180 of 200 points")
    assert [t["name"] for t in missed["tests"]] == \
        ["ch01_a/two: 20 of 100 points missed (partial: bandwidth: slow)"]
    assert exports.classroom_result(report, "ch01_a", 200) == earned
    _, missed = exports.classroom_results(report, "ch02_b", 150)
    assert missed["max_score"] == 130 and missed["status"] == "fail"
    assert [t["name"].split(":")[0] for t in missed["tests"]] == \
        ["ch02_b/three", "ch02_b/four", "ch02_b/five"]
    full = only(ExerciseStatus.PASSED)
    earned, missed = exports.classroom_results(full, "ch01_a", 100)
    assert earned["status"] == missed["status"] == "pass" and missed["max_score"] == 0
    none, untouched = exports.classroom_results(None, "ch01_a", 200, "no grading report: x")
    assert classroom_problems(none) == [] and none["status"] == "error"
    assert none["max_score"] == 0 and none["tests"][0]["message"].endswith("x")
    assert untouched["max_score"] == 200 and untouched["tests"][0]["score"] == 0
    line = exports.classroom_output(exports.classroom_results(report, "ch01_a", 200))
    first, second = line.splitlines()
    assert decode(first, "earned")["max_score"] == 180 and decode(second, "missed")


def test_classroom_points_command(tmp_path):
    saved = tmp_path / "report.json"
    render.write_json(sample_report(), saved)
    result = run_cli("classroom-points", saved, "--chapter", "ch02_b", "--max-score", "150")
    assert result.returncode == 0, result.stderr
    earned, missed = result.stdout.strip().splitlines()
    assert classroom_problems(decode(earned, "earned")) == []
    assert decode(missed, "missed")["max_score"] == 130
    nothing = run_cli("classroom-points", tmp_path / "none.json", "--chapter", "ch02_b",
                      "--max-score", "150")
    assert nothing.returncode == 0
    earned = decode(nothing.stdout.splitlines()[0], "earned")
    assert earned["status"] == "error" and "does not exist" in earned["tests"][0]["message"]


def _yaml_blocks(text: str) -> list[str]:
    """The workflow's lines outside block scalars (run: | and run: >-)."""
    lines, block = [], None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if block is not None and (indent > block or not line.strip()):
            continue
        block = indent if re.search(r":\s*[|>]-?$", line) else None
        lines.append(line)
    return lines


def _steps(text: str) -> dict[str, str]:
    """Each chapter step's id and its command, its folded lines joined as YAML joins them."""
    found = re.findall(r"- name: (ch\d\d_\w+)\n +id: (ch\d\d)\n +run: >-\n((?: {10}.+\n)+)", text)
    return {name: (step, " ".join(l.strip() for l in command.splitlines()))
            for name, step, command in found}


def test_classroom_workflow_from_the_manifests():
    exercises = manifest.discover(ROOT)
    text = exports.classroom_workflow(exercises)
    points = exports.chapter_points(exercises)
    assert "\t" not in text
    # YAML-like: every line a comment, a key, or a list item, indented by two spaces a level.
    for line in _yaml_blocks(text):
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 2 == 0, line
        assert re.match(r'^ *(#.*|- .+|"?[\w-]+"?:( .*)?)$', line), line
    assert "runs-on: [self-hosted, gpu]" in text and "no GPU" in text
    assert "uses: classroom-resources/autograding-grading-reporter@v1" in text
    assert "web editor replaces this file" in text
    # The set-up's Python, everywhere: no step runs the system's python3.
    assert "CI=false . scripts/setup.sh\n" in text and 'echo "PY=$PY" >> "$GITHUB_ENV"' in text
    assert not re.search(r"^ +[^# ].*\bpython3 ", text, re.M)
    steps = _steps(text)
    assert list(steps) == list(points)
    runners = []
    for name, (step, command) in steps.items():
        assert command == (f'"$PY" -m grader classroom-points {exports.CLASSROOM_REPORT} '
                           f'--chapter {name} --max-score {points[name]:g} >> "$GITHUB_OUTPUT"')
        for half in ("earned", "missed"):
            runner = f"{step}{half}"
            assert f'{runner.upper()}_RESULTS: "${{{{ steps.{step}.outputs.{half} }}}}"' in text
            runners.append(runner)
    assert f"runners: {','.join(runners)}\n" in text
    assert sum(points.values()) == sum(e.max_points for e in exercises)


def test_classroom_workflow_follows_the_points():
    (ex, *_) = manifest.discover(ROOT)
    changed = dataclasses.replace(ex, correctness_points=ex.correctness_points + 7)
    text = exports.classroom_workflow([changed])
    assert f"--max-score {changed.max_points:g} " in text


def workflow_env(report: model.Report, tmp_path: Path) -> tuple[dict, str]:
    """The reporter step's environment and runners, made as the workflow makes them: each
    chapter step's command run by bash (with $PY this Python) into $GITHUB_OUTPUT, and the
    env: lines' expressions read from what the steps output."""
    text = exports.classroom_workflow(manifest.discover(ROOT))
    saved = tmp_path / exports.CLASSROOM_REPORT
    render.write_json(report, saved)
    return chapter_env(text, tmp_path, {"PY": PYTHON, "PYTHONPATH": str(ROOT)})


def chapter_env(text: str, cwd: Path, extra: dict) -> tuple[dict, str]:
    """The reporter step's environment and runners: the workflow's chapter steps run by bash
    in cwd (where its report is), with extra added to this process's environment."""
    running = {}
    for name, (step, command) in _steps(text).items():  # at once: each starts a Python
        output = cwd / f"{step}.out"
        output.write_text("")
        running[step] = (output, subprocess.Popen(
            ["bash", "-c", command], cwd=cwd, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **extra, "GITHUB_OUTPUT": str(output)}))
    outputs = {}
    for step, (output, process) in running.items():
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        outputs[step] = dict(line.split("=", 1) for line in output.read_text().splitlines())
    env = {var: outputs[step][half] for var, step, half in re.findall(
        r'(\w+_RESULTS): "\$\{\{ steps\.(\w+)\.outputs\.(\w+) \}\}"', text)}
    (runners,) = re.findall(r"runners: (.+)\n", text)
    return env, runners


MAX_ARG_STRLEN = 131072  # Linux: one environment string, name=value, at most this many bytes


@pytest.mark.parametrize("kind", ["skeletons", "solutions", "partial"])
def test_the_reporter_log_shows_the_points_it_sends(kind, tmp_path):
    report = course_report(kind)
    env, runners = workflow_env(report, tmp_path)
    for name, value in env.items():
        assert len(value) <= exports.CLASSROOM_LIMIT, (name, len(value))
        assert len(f"{name}={value}".encode()) < MAX_ARG_STRLEN // 3
    runs = reporter_input(env, runners)
    for _, results in runs:
        assert classroom_problems(results) == []
    shown, sent = console_totals(runs), points_sent(runs)
    assert shown == sent  # exactly, as the reporter adds them
    total = sum(int(sum(e.score for e in report.exercises if e.chapter == c) + 0.5)
                for c in {e.chapter for e in report.exercises})
    assert sent == (total, report.max_score)
    assert sent[0] == int(sent[0])  # whole points: the log prints them as Classroom shows them
    # The kernel takes the environment as it is: a value over MAX_ARG_STRLEN fails here with
    # "Argument list too long", as it stopped the reporter.
    assert subprocess.run(["env"], env={**env, "PATH": os.environ["PATH"]},
                          capture_output=True).returncode == 0
    if kind == "skeletons":
        assert sent[0] == 0
    if kind == "solutions":
        assert sent == (report.max_score, report.max_score)


def test_a_chapter_value_stays_small_whatever_the_report():
    report = only(ExerciseStatus.CRASHED)
    (ex,) = report.exercises
    ex.message = "why " * 20000
    report.exercises = [dataclasses.replace(ex, key=f"ch02_b/{i:05d}" + "k" * 300,
                                            score=round(0.37 * (i % 50), 3))
                        for i in range(2000)]
    max_score = report.max_score
    earned, missed = exports.classroom_results(report, "ch02_b", max_score)
    for results in (earned, missed):
        assert len(exports.classroom_value(results)) <= exports.CLASSROOM_LIMIT
        assert classroom_problems(results) == []
    runs = [("a", earned), ("b", missed)]
    assert console_totals(runs) == points_sent(runs)
    assert points_sent(runs) == (int(report.score + 0.5), max_score)
    assert "more" in earned["tests"][-1]["name"] and "more" in missed["tests"][-1]["name"]


REPORTER = os.environ.get("COURSE_CLASSROOM_REPORTER", "")


HAS_REPORTER = bool(shutil.which("node") and os.path.isfile(REPORTER))
NO_REPORTER = ("the reporter itself needs node on PATH and COURSE_CLASSROOM_REPORTER naming its "
               "released dist/main.js (classroom-resources/autograding-grading-reporter@v1; "
               "third-party code, not kept in the course)")


@pytest.mark.skipif(not HAS_REPORTER, reason=NO_REPORTER)
@pytest.mark.parametrize("kind", ["skeletons", "solutions", "partial"])
def test_the_reporter_itself_under_node(kind, tmp_path):
    report = course_report(kind)
    env, runners = workflow_env(report, tmp_path)
    run_reporter(env, runners, tmp_path)


def run_reporter(env: dict, runners: str, tmp_path: Path) -> None:
    """The reporter under Node on the runners' values: the totals its log prints are the
    points it sends, and the model's."""
    files = {}
    for name in ("OUTPUT", "STATE", "ENV", "PATH", "STEP_SUMMARY"):
        files[f"GITHUB_{name}"] = str(tmp_path / f"github_{name.lower()}")
        Path(files[f"GITHUB_{name}"]).write_text("")
    done = subprocess.run(["node", REPORTER], capture_output=True, text=True, timeout=120,
                          env={"PATH": os.environ["PATH"], "INPUT_RUNNERS": runners,
                               **files, **env})
    out = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
    assert "Argument list too long" not in done.stderr, done.stderr
    (summary,) = re.findall(r"::notice title=Autograding report::(\{.*\})", out)
    sent = json.loads(summary)
    (row,) = re.findall(r"Total:\s*│\s*(\S+)\s*│\s*(\S+)\s*│", out)
    runs = reporter_input(env, runners)
    assert (float(row[0]), float(row[1])) == console_totals(runs) == points_sent(runs)
    assert (sent["totalPoints"], sent["maxPoints"]) == points_sent(runs)
    assert row[0] == f"{sent['totalPoints']}"  # as printed: the same digits
    for runner, results in runs:
        if results["max_score"]:
            assert f"Total points for {runner}: {get_test_score(results):.2f}/" \
                   f"{results['max_score']}" in out
