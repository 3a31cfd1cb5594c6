"""grader/exports.py: each platform's format checked against its published field list, for a
full-marks, a crashed and a compile-error report (sample_report has each kind); the Gradescope
autograder zip and its upload mapping; the GitHub Classroom workflow and points."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import stat
import zipfile
from pathlib import Path

import pytest

from grader import exports, manifest, model, render, template, tools
from grader.errors import GraderError
from grader.model import ExerciseStatus
from helpers import ROOT, assert_one_line_error, needs_solutions, run_cli, sample_report

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
    if len(json.dumps(data).encode()) > 1_000_000:  # "limited to 1 MB"
        problems.append("results: over 1 MB")
    return problems


# GitHub Classroom: what classroom-resources/autograding-grading-reporter reads from
# <ID>_RESULTS (src/main.js, aggregate-results.js, notify-classroom.js, console-results.js).
CLASSROOM = {"version": int, "status": ("pass", "fail", "error"), "max_score": NUMBER,
             "tests": list}
CLASSROOM_TEST = {"name": str, "status": ("pass", "fail", "error"), "score": NUMBER,
                  "message": str}


def classroom_problems(data: dict) -> list[str]:
    problems = _check_fields("result", data, CLASSROOM, required=("status", "max_score",
                                                                    "tests"))
    for i, test in enumerate(data.get("tests", [])):
        problems += _check_fields(f"tests[{i}]", test, CLASSROOM_TEST,
                                  required=("name", "status", "score"))
    if sum(t.get("score", 0) for t in data.get("tests", [])) > data.get("max_score", 0) + 1e-9:
        problems.append("result: the tests' scores add up to more than max_score")
    return problems


def only(status: ExerciseStatus) -> model.Report:
    report = sample_report()
    report.exercises = [e for e in report.exercises if e.status == status]
    assert len(report.exercises) == 1
    return report


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
    source = folder / "source"
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(source)
        for info in zf.infolist():  # extractall drops the permission bits
            mode = info.external_attr >> 16
            if mode:
                os.chmod(source / info.filename, stat.S_IMODE(mode))
    return archive, source


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
def test_export_gradescope_refuses_a_folder(tmp_path):
    result = run_cli("export-gradescope", tmp_path)
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "is a folder")


# -------------------------------------------------------------------------- GitHub Classroom

def decode(line: str) -> dict:
    key, _, value = line.partition("=")
    assert key == "result"
    return json.loads(base64.b64decode(value))


def test_classroom_points_per_chapter():
    report = sample_report()
    ch01 = exports.classroom_result(report, "ch01_a", 200)
    assert classroom_problems(ch01) == []
    assert ch01["status"] == "fail" and ch01["max_score"] == 200
    assert [(t["name"], t["status"], t["score"]) for t in ch01["tests"]] == \
        [("ch01_a/one", "pass", 100.0), ("ch01_a/two", "fail", 80.0)]
    ch02 = exports.classroom_result(report, "ch02_b", 150)
    assert classroom_problems(ch02) == []
    assert [t["status"] for t in ch02["tests"]] == ["fail"] * 3
    assert sum(t["score"] for t in ch02["tests"]) == 20
    full = only(ExerciseStatus.PASSED)
    assert exports.classroom_result(full, "ch01_a", 100)["status"] == "pass"
    missing = exports.classroom_result(None, "ch01_a", 200, "no grading report: x")
    assert classroom_problems(missing) == [] and missing["status"] == "error"
    assert missing["tests"][0]["score"] == 0 and missing["tests"][0]["message"].endswith("x")
    assert decode(exports.classroom_output(ch01)) == ch01


def test_classroom_points_command(tmp_path):
    saved = tmp_path / "report.json"
    render.write_json(sample_report(), saved)
    result = run_cli("classroom-points", saved, "--chapter", "ch02_b", "--max-score", "150")
    assert result.returncode == 0, result.stderr
    data = decode(result.stdout.strip())
    assert classroom_problems(data) == [] and data["max_score"] == 150
    nothing = run_cli("classroom-points", tmp_path / "none.json", "--chapter", "ch02_b",
                      "--max-score", "150")
    assert nothing.returncode == 0
    data = decode(nothing.stdout.strip())
    assert data["status"] == "error" and "does not exist" in data["tests"][0]["message"]


def test_classroom_workflow_from_the_manifests():
    exercises = manifest.discover(ROOT)
    text = exports.classroom_workflow(exercises)
    points = exports.chapter_points(exercises)
    assert "\t" not in text
    # YAML-like: every line a comment, a key, or a list item, indented by two spaces a level.
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 2 == 0, line
        assert re.match(r'^ *(#.*|- .+|"?[\w-]+"?:( .*)?)$', line), line
    assert "runs-on: [self-hosted, gpu]" in text and "no GPU" in text
    assert "uses: classroom-resources/autograding-grading-reporter@v1" in text
    steps = re.findall(r"- name: (ch\d\d_\w+)\n +id: (ch\d\d)\n +run: (.+)\n", text)
    assert [name for name, _, _ in steps] == list(points)
    for name, step_id, command in steps:
        assert f"--chapter {name} --max-score {points[name]:g} " in command
        assert command.startswith(f"python3 -m grader classroom-points {exports.CLASSROOM_REPORT}")
        assert command.endswith('>> "$GITHUB_OUTPUT"')
        assert f'{step_id.upper()}_RESULTS: "${{{{ steps.{step_id}.outputs.result }}}}"' in text
    assert f"runners: {','.join(i for _, i, _ in steps)}\n" in text
    assert sum(points.values()) == sum(e.max_points for e in exercises)


def test_classroom_workflow_follows_the_points():
    (ex, *_) = manifest.discover(ROOT)
    changed = dataclasses.replace(ex, correctness_points=ex.correctness_points + 7)
    text = exports.classroom_workflow([changed])
    assert f"--max-score {changed.max_points:g} " in text
