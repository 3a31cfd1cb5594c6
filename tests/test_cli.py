"""The command line: 'grader: error:' on one line with exit status 2 whenever the grader
cannot run, never a traceback; list, skeletons --check; a whole grade with stand-ins."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from fakes import bench_data, fake_bench, fake_gtest, use_fake_build_tools
from grader import cli, model, tools
from helpers import ROOT, needs_solutions, run_cli

NO_GPU = tools.query_gpu() is None


def grader_errors(stderr: str, *fragments: str) -> str:
    """Exactly one 'grader: error:' line and no traceback. Lines 'grader: warning:' (exercise
    folders without a manifest yet) may come before it."""
    assert "Traceback" not in stderr, stderr
    lines = [l for l in stderr.splitlines() if not l.startswith("grader: warning: ")]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("grader: error: "), stderr
    for fragment in fragments:
        assert fragment.lower() in lines[0].lower(), (fragment, lines[0])
    return lines[0]


@pytest.mark.parametrize("args, fragments", [
    (["grade", "skeletons", "-e", "vectoradd"], ["unknown exercise", "vector_add"]),
    (["grade", "skeletons", "-e", "ch99"], ["unknown exercise or chapter 'ch99'"]),
    (["grade", "no/such/submission"], ["no/such/submission", "does not exist"]),
    (["grade", "README.md"], ["README.md", "not a directory"]),
    (["grade", "skeletons", "--build-only", "--seed", "abc"], ["--seed 'abc'", "whole number"]),
    (["grade", "skeletons", "--build-only", "--seed", "-1"], ["--seed", "2^64"]),
    (["grade", "skeletons", "-e", "vector_add", "-j", "0"], ["--jobs"]),
    (["render", "no-such-report.json"], ["does not exist"]),
])
def test_cli_errors(args, fragments):
    r = run_cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    grader_errors(r.stderr, *fragments)
    assert r.stdout == ""


def test_cli_bad_output_paths_are_refused_before_any_work(tmp_path):
    # Checked before the build starts, so a long grade is never lost to a typo at its end.
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    cases = [
        (["--json", str(tmp_path)], ["--json", "is a folder"]),
        (["--junit", str(tmp_path)], ["--junit", "is a folder"]),
        (["--json", str(a_file / "r.json")], ["--json", "cannot make its folder"]),
        (["--build-dir", str(a_file)], ["--build-dir", "is a file"]),
    ]
    for extra, fragments in cases:
        r = run_cli("grade", "skeletons", "--build-only", "-e", "vector_add", *extra)
        assert r.returncode == 2, (extra, r.stderr)
        grader_errors(r.stderr, *fragments)


def test_cli_a_folder_without_exercise_files_is_an_error_that_says_where_it_looked(tmp_path):
    (tmp_path / "vector_add.cu").write_text("// in the wrong place: no chapter folder\n")
    r = run_cli("grade", tmp_path, "--build-only")
    assert r.returncode == 2
    grader_errors(r.stderr, "no exercise files", str(tmp_path / "ch01_programming_model"))


def test_cli_render_junit_makes_its_folder(tmp_path):
    report = tmp_path / "r.json"
    from helpers import sample_report
    from grader import render
    render.write_json(sample_report(), report)
    target = tmp_path / "new" / "folder" / "r.xml"
    r = run_cli("render", report, "--junit", target)
    assert r.returncode == 0, r.stderr
    assert ET.parse(target).getroot().tag == "testsuites"
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    r = run_cli("render", report, "--junit", a_file / "r.xml")
    assert r.returncode == 2
    grader_errors(r.stderr, "--junit", "cannot make its folder")


def test_cli_list_into_a_closed_pipe_is_quiet():
    import subprocess
    from helpers import PYTHON
    # `true` exits without reading, before the grader writes: its writes meet a closed pipe.
    for reader in ("true", "head -n 1"):
        r = subprocess.run(["bash", "-c", f"set -o pipefail; '{PYTHON}' -m grader list | {reader}"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, (reader, r.stderr)
        assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_cli_no_gpu_without_build_only():
    r = run_cli("grade", "skeletons", "-e", "vector_add")
    assert r.returncode == 2
    grader_errors(r.stderr, "no NVIDIA GPU found", "--build-only")


def test_cli_no_gpu_in_process(monkeypatch, capsys):
    monkeypatch.setattr(tools, "query_gpu", lambda: None)
    assert cli.main(["grade", "skeletons", "-e", "vector_add"]) == 2
    grader_errors(capsys.readouterr().err, "no NVIDIA GPU found")


def test_cli_usage_errors_are_argparse_exit_2():
    r = run_cli("grade", "--no-such-option")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_cli_list():
    r = run_cli("list")
    assert r.returncode == 0, r.stderr
    assert "ch01_programming_model/vector_add" in r.stdout
    r = run_cli("list", "--json")
    assert r.returncode == 0
    data = json.loads(r.stdout)
    va = next(e for e in data if e["name"] == "vector_add")
    assert va["key"] == "ch01_programming_model/vector_add" and va["points"] == 100
    assert va["files"] == ["vector_add.cu"]


@needs_solutions
def test_cli_skeletons_check():
    r = run_cli("skeletons", "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "skeletons/ matches solutions/" in r.stdout


# ------------------------------------------------------------------ a course copy in tmp

@pytest.fixture
def course_copy(tmp_path):
    """A copy of the grader with a made-up chapters/ tree; 'python -m grader' run from it
    uses the copy (cli.ROOT is the copy's root)."""
    root = tmp_path / "course"
    shutil.copytree(ROOT / "grader", root / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "chapters" / "ch01_basics" / "thing").mkdir(parents=True)
    return root


GOOD_MANIFEST = """\
[exercise]
name = "thing"
chapter = "ch01_basics"
title = "A thing"
files = ["thing.cu"]

[correctness]
points = 10
"""


@pytest.mark.parametrize("text, fragments", [
    (GOOD_MANIFEST.replace('title = "A thing"\n', ""), ["exercise.title", "is required"]),
    (GOOD_MANIFEST.replace("points = 10", 'points = "ten"'), ["correctness.points", "str"]),
    (GOOD_MANIFEST + "\n[[performance]]\nname = 'p'\npoints = 1\nmeasure = 'a'\n"
     "baseline = 'b'\nfull_at = 0.5\nzero_at = 0.5\n", ["performance[0].zero_at"]),
    (GOOD_MANIFEST + "oops = = 1\n", ["not valid TOML"]),
    ("colour = 'red'\n" + GOOD_MANIFEST, ["manifest.colour", "unknown field"]),
])
@pytest.mark.parametrize("command", [["list"], ["grade", "chapters", "--build-only"]])
def test_cli_malformed_manifest(course_copy, text, fragments, command):
    path = course_copy / "chapters" / "ch01_basics" / "thing" / "thing.toml"
    path.write_text(text)
    r = run_cli(*command, cwd=course_copy)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = grader_errors(r.stderr, "malformed manifest", *fragments)
    assert str(path) in line


def test_cli_list_in_course_copy(course_copy):
    (course_copy / "chapters" / "ch01_basics" / "thing" / "thing.toml").write_text(
        GOOD_MANIFEST)
    (course_copy / "chapters" / "ch01_basics" / "draft").mkdir()
    r = run_cli("list", cwd=course_copy)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ch01_basics/thing")
    assert "draft" in r.stderr and "warning" in r.stderr


def test_cli_malformed_manifest_in_process(course_copy, monkeypatch, capsys):
    (course_copy / "chapters" / "ch01_basics" / "thing" / "thing.toml").write_text("[exercise]\n")
    monkeypatch.setattr(cli, "ROOT", course_copy)
    assert cli.main(["list"]) == 2
    grader_errors(capsys.readouterr().err, "malformed manifest", "exercise.name", "required")


# ------------------------------------------------------------------ a whole grade, faked

@pytest.fixture
def faked_grade(tmp_path, monkeypatch):
    """cli.main(grade ...) with a fake GPU, meson, ninja and compute-sanitizer, and stand-in
    test and benchmark binaries in the build directory."""
    use_fake_build_tools(monkeypatch, tmp_path)
    monkeypatch.setattr(tools, "query_gpu", lambda: model.GpuInfo("Fake GPU", "9.0", "1", 1))
    submission = tmp_path / "submission" / "ch01_programming_model"
    submission.mkdir(parents=True)
    (submission / "vector_add.cu").write_text("// mine\n")
    build = tmp_path / "build"

    def go(cases, bench, *extra):
        fake_gtest(build / "vector_add_test", cases)
        fake_bench(build / "vector_add_bench", bench)
        return cli.main(["grade", str(submission.parent), "-e", "vector_add", "-q",
                         "--build-dir", str(build), "--seed", "0x10",
                         "--json", str(tmp_path / "r.json"),
                         "--junit", str(tmp_path / "j.xml"), *extra])

    return go


def test_cli_grade_faked_full_marks(faked_grade, tmp_path, capsys):
    assert faked_grade(["S.a", "Small/S.b"], bench_data(900, 1000)) == 0
    out = capsys.readouterr().out
    assert "100.0/100.0" in out and "(100.0%)" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["seed"] == 16 and data["percent"] == 100.0
    [ex] = data["exercises"]
    assert ex["status"] == "passed"
    assert ET.parse(tmp_path / "j.xml").getroot().get("failures") == "0"


def test_cli_grade_on_a_busy_gpu_exits_3_with_the_grade_incomplete(faked_grade, tmp_path,
                                                                     capsys, monkeypatch):
    """Another process keeps the GPU busy through every try: the report is written, the
    benchmark is not measured (no points lost, none given), the exit status is 3 and the
    terminal and the JUnit file say why, whatever --fail-under asks."""
    from grader.gpu_load import GpuProcess, Look
    from fakes import FakeProbe
    monkeypatch.setenv("COURSE_GPU_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setattr(tools, "query_gpu", lambda: model.GpuInfo(
        "Fake GPU", "9.0", "1", 1, uuid="GPU-fake", index=0))
    monkeypatch.setattr("grader.gpu_load.probe_for",
                        lambda uuid: FakeProbe([Look([GpuProcess(77, "train.py")], 99)], {77}))
    monkeypatch.setattr("grader.stages.measured.FIRST_WAIT_S", 0.0)
    assert faked_grade(["S.a", "Small/S.b"], bench_data(900, 1000), "--fail-under", "100") == 3
    captured = capsys.readouterr()
    assert "INCOMPLETE: 1 exercise was not measured" in captured.out
    assert "grade incomplete: 1 exercise could not be measured (vector_add)" in captured.err
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["complete"] is False and data["exercises"][0]["status"] == "incomplete"
    assert "process 77 (train.py)" in data["exercises"][0]["message"]
    skipped = ET.parse(tmp_path / "j.xml").getroot().find(".//testcase[@name='benchmark']/skipped")
    assert skipped is not None and "not measured" in skipped.get("message")


def test_cli_grade_faked_fail_under(faked_grade, tmp_path, capsys):
    cases = ["Small/S.a", {"name": "Large/S.b", "status": "failed"}]  # outside the filter
    assert faked_grade(cases, bench_data(900, 1000), "--fail-under", "50") == 1
    err = capsys.readouterr().err
    assert "below --fail-under 50%" in err
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["score"] == 30 and data["exercises"][0]["status"] == "failed"
    assert ET.parse(tmp_path / "j.xml").getroot().get("failures") == "1"  # Large/S.b


# ------------------------------------------------------------------ help, for every command

def _subcommands():
    parser = cli._parser()
    sub = next(a for a in parser._actions if isinstance(a, __import__("argparse")._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    return sub.choices, helps


@pytest.mark.parametrize("command", sorted(_subcommands()[0]))
def test_every_command_and_argument_says_what_it_is(command):
    parsers, helps = _subcommands()
    assert helps.get(command), f"{command} has no help line in 'python3 -m grader --help'"
    undocumented = [a.option_strings or [a.dest] for a in parsers[command]._actions
                    if a.help is None and a.dest != "help"]
    assert undocumented == [], f"{command}: no help for {undocumented}"


@pytest.mark.parametrize("command", ["init", "render", "gradescope-run"])
def test_the_commands_once_without_help_describe_themselves(command):
    r = run_cli(command, "--help")
    assert r.returncode == 0
    usage, _, rest = r.stdout.partition("\n\n")
    description = rest.split("\n\n")[0]
    # More than the usage and an options list: a paragraph that says what it does.
    assert not description.startswith(("options:", "positional")), r.stdout
    assert len(description.split()) >= 15, r.stdout


# ----------------------------------------------------------- progress when no one watches

class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class _Tty(__import__("io").StringIO):
    def isatty(self):
        return True


def test_progress_in_a_log_says_the_step_every_30_s():
    import io
    clock, out = _Clock(), io.StringIO()
    progress = cli.Progress(quiet=False, stream=out, clock=clock)
    progress("configuring build/grade/x")
    progress("built vector_add (1 of 53, 12 s)")
    clock.now += 29
    progress.tick()
    assert out.getvalue() == ""  # a grade under 30 s says nothing in a log
    clock.now += 1
    progress.tick()
    assert out.getvalue() == "grader: [30 s] built vector_add (1 of 53, 12 s)\n"
    progress("built matrix_sum (2 of 53, 40 s)")
    clock.now += 10
    progress.tick()  # 10 s after the last line: nothing yet
    clock.now += 20
    progress.tick()
    clock.now += 95  # a long silent step: said again, as still going
    progress.tick()
    assert out.getvalue().splitlines()[1:] == [
        "grader: [1 min 00 s] built matrix_sum (2 of 53, 40 s)",
        "grader: [2 min 35 s] built matrix_sum (2 of 53, 40 s) (still)"]


def test_progress_at_a_terminal_is_every_step_and_under_q_none():
    import io
    tty = _Tty()
    progress = cli.Progress(quiet=False, stream=tty)
    progress("configuring")
    progress("building 3 exercises")
    assert tty.getvalue() == "grader: configuring\ngrader: building 3 exercises\n"
    for stream in (_Tty(), io.StringIO()):
        quiet = cli.Progress(quiet=True, stream=stream, clock=_Clock())
        with quiet:
            quiet("configuring")
            quiet.clock.now += 100
            quiet.tick()
        assert stream.getvalue() == ""


# ---------------------------------------------------------- --build-only: what it can fail

@pytest.fixture
def faked_build_only(tmp_path, monkeypatch):
    """cli.main(grade --build-only ...) of vector_add with a fake meson and ninja."""
    found = use_fake_build_tools(monkeypatch, tmp_path)
    monkeypatch.setattr(tools, "query_gpu", lambda: None)
    submission = tmp_path / "submission" / "ch01_programming_model"
    submission.mkdir(parents=True)
    (submission / "vector_add.cu").write_text("// mine\n")

    def go(*extra, quiet=True):
        return cli.main(["grade", str(submission.parent), "-e", "vector_add",
                         *(["-q"] if quiet else []),
                         "--build-only", "--build-dir", str(tmp_path / "build"),
                         "--json", str(tmp_path / "r.json"), *extra])
    return go, found


def test_build_only_exits_0_when_everything_compiles_and_reports_no_score(faked_build_only,
                                                                          tmp_path, capsys):
    go, _ = faked_build_only
    assert go() == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["score"] is None and data["percent"] is None
    assert data["exercises"][0]["status"] == "skipped"
    assert "no score" in capsys.readouterr().out


def test_build_only_exits_1_when_an_exercise_does_not_compile(faked_build_only, tmp_path,
                                                               capsys):
    from fakes import fake_tool
    go, found = faked_build_only
    fake_tool(found["ninja"], "FAILED: vector_add.cu.o\nvector_add.cu(3): error: no\n", 1)
    assert go() == 1
    captured = capsys.readouterr()
    assert "--build-only: 1 did not compile (vector_add)" in captured.err
    assert "compile error" in captured.out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["exercises"][0]["status"] == "compile_error" and data["score"] is None


# ------------------------------------------------------------- misnamed and misplaced files

@pytest.mark.parametrize("place, named", [
    ("ch01_programming_model/VectorAdd.cu",
     "ch01_programming_model/VectorAdd.cu (should be ch01_programming_model/vector_add.cu)"),
    ("vector_add.cpp", "vector_add.cpp (should be ch01_programming_model/vector_add.cu)"),
    ("ch01/vector_add.cu", "ch01/vector_add.cu (should be ch01_programming_model/vector_add.cu)"),
])
def test_no_exercise_files_names_the_near_miss(tmp_path, place, named):
    (tmp_path / place).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / place).write_text("// mine\n")
    r = run_cli("grade", tmp_path, "--build-only")
    assert r.returncode == 2
    line = grader_errors(r.stderr, "no exercise files")
    assert f"found {named}" in line


def test_no_exercise_files_without_a_near_miss_names_none(tmp_path):
    (tmp_path / "ch01_programming_model").mkdir()
    (tmp_path / "ch01_programming_model" / "notes.txt").write_text("x")
    r = run_cli("grade", tmp_path, "--build-only")
    assert "found" not in grader_errors(r.stderr, "no exercise files")


# ---------------------------------------------------------------- where options may write

def test_the_students_chapter_folders_are_never_a_destination(tmp_path, monkeypatch):
    from pathlib import Path
    from grader.errors import GraderError
    monkeypatch.setattr(cli, "ROOT", tmp_path)
    (tmp_path / "workspace" / "ch01_programming_model").mkdir(parents=True)
    with pytest.raises(GraderError, match="inside your work in workspace/ch01_programming_model/"):
        cli._output_file(tmp_path / "workspace" / "ch01_programming_model" / "r.json",
                         "--json", "json")
    # The workspace's own top level is not a chapter folder: a report may go there.
    assert cli._output_file(tmp_path / "workspace" / "r.json", "--json", "json") is not None
    with pytest.raises(GraderError, match="inside the course's grader/"):
        cli._output_file(Path(tmp_path / "grader" / "r.json"), "--json", "json")


def test_an_earlier_report_is_replaced_and_other_files_are_not(tmp_path):
    from grader.errors import GraderError
    old = tmp_path / "old.json"
    old.write_text('{"exercises": []}')
    assert cli._output_file(old, "--json", "json") == old
    junit = tmp_path / "old.xml"
    junit.write_text('<?xml version="1.0"?>\n<testsuites name="x"/>\n')
    assert cli._output_file(junit, "--junit", "xml") == junit
    empty = tmp_path / "empty.html"
    empty.write_text("")
    assert cli._output_file(empty, "--html", "html") == empty
    for name, kind, text in (("list.json", "json", "[1, 2]"), ("cfg.xml", "xml", "<config/>"),
                             ("page.html", "html", "just text"), ("a.zip", "zip", "text")):
        (tmp_path / name).write_text(text)
        with pytest.raises(GraderError, match="exists and is not"):
            cli._output_file(tmp_path / name, "--x", kind)


def test_a_grade_in_a_log_prints_progress_lines(faked_build_only, capsys, monkeypatch):
    """Not under -q, stderr captured (not a terminal): the heartbeat prints the step the grade
    is at (here every beat, to be quick), and -q silences it."""
    import time as _time
    from grader import pipeline
    go, _ = faked_build_only
    monkeypatch.setattr(cli.Progress, "EVERY_S", 0.0)
    monkeypatch.setattr(cli.Progress, "BEAT_S", 0.01)
    real = pipeline.Grader.run

    def slow_run(self):  # a grade long enough for a few beats
        report = real(self)
        _time.sleep(0.3)
        return report
    monkeypatch.setattr(pipeline.Grader, "run", slow_run)
    assert go(quiet=False) == 0
    lines = [l for l in capsys.readouterr().err.splitlines() if l.startswith("grader: [")]
    assert lines, "no progress line in a log"
    assert any("vector_add" in l or "configur" in l for l in lines), lines
    assert go() == 0
    assert not [l for l in capsys.readouterr().err.splitlines() if l.startswith("grader: [")]
