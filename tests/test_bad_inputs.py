"""Bad inputs: each is refused on one line ('grader: error: ...'), exit status 2, no traceback,
before any work, and nothing of the student's or the course's is written over.

One row per bad input: the command line, and what its one line must say. Rows that need a
folder the grader cannot write run as an unprivileged user when the tests run as root (root
writes anywhere); they skip where that user cannot run the grader."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from fakes import use_fake_build_tools
from grader import cli, model, render
from grader.stages import build
from grader.stages.common import GradeOptions
from helpers import PYTHON, ROOT, needs_solutions, sample_report

NOBODY = 65534
SOURCE = "ch01_programming_model/vector_add.cu"


@dataclass
class Places:
    """The files and folders the rows name (made once for the module)."""
    top: Path            # readable by everyone, writable by everyone
    sub: Path            # a submission: ch01_programming_model/vector_add.cu
    locked: Path         # a folder no one but root can write
    notes: Path          # an existing file of the student's that is not a report
    report: Path         # a saved report of a graded run
    build_only: Path     # a saved report of a --build-only run
    not_utf8: Path       # a submission whose folder name is not UTF-8


@pytest.fixture(scope="module")
def places():
    # Not pytest's tmp_path: that is private to its user, and some rows run as another.
    top = Path(tempfile.mkdtemp(prefix="grader-bad-inputs-"))
    top.chmod(0o777)
    sub = top / "sub"
    (sub / "ch01_programming_model").mkdir(parents=True)
    shutil.copy(ROOT / "skeletons" / SOURCE, sub / SOURCE)
    locked = top / "locked"
    locked.mkdir()
    notes = top / "notes.txt"
    notes.write_text("my notes, not a report\n")
    report, build_only = top / "report.json", top / "build_only.json"
    render.write_json(sample_report(), report)
    scoreless = sample_report()
    scoreless.options["build_only"] = True
    render.write_json(scoreless, build_only)
    not_utf8 = Path(os.fsdecode(bytes(top) + b"/caf\xe9"))
    shutil.copytree(sub, not_utf8)
    for path in [top, *top.rglob("*")]:
        path.chmod(0o777 if path.is_dir() else 0o666)
    locked.chmod(0o555)
    yield Places(top, sub, locked, notes, report, build_only, not_utf8)
    locked.chmod(0o755)
    shutil.rmtree(top, ignore_errors=True)


# (id, arguments from the places, fragments of the one line, runs where it cannot write)
ROWS = [
    ("fail-under above 100", lambda p: ["grade", p.sub, "--build-only", "--fail-under", "150"],
     ["--fail-under 150", "0 to 100"], False),
    ("fail-under below 0", lambda p: ["grade", p.sub, "--build-only", "--fail-under", "-5"],
     ["--fail-under -5", "0 to 100"], False),
    ("fail-under not a number", lambda p: ["grade", p.sub, "--fail-under", "nan"],
     ["--fail-under nan", "0 to 100"], False),
    ("fail-under on a build-only run",
     lambda p: ["grade", p.sub, "--build-only", "--fail-under", "50"],
     ["--fail-under", "--build-only", "there is none"], False),
    ("json over a source file", lambda p: ["grade", p.sub, "--build-only",
                                           "--json", p.sub / SOURCE],
     ["--json", "source file's extension (.cu)"], False),
    ("html over a source file", lambda p: ["grade", p.sub, "--build-only",
                                           "--html", p.sub / SOURCE],
     ["--html", "source file's extension (.cu)"], False),
    ("junit named like a header", lambda p: ["grade", p.sub, "--build-only",
                                             "--junit", p.top / "report.h"],
     ["--junit", "source file's extension (.h)"], False),
    ("json named like a manifest", lambda p: ["grade", p.sub, "--build-only",
                                              "--json", p.top / "vector_add.toml"],
     ["--json", "(.toml)"], False),
    ("json inside the submission", lambda p: ["grade", p.sub, "--build-only",
                                              "--json", p.sub / "report.json"],
     ["--json", "inside the submission"], False),
    ("html inside the course's chapters", lambda p: ["grade", p.sub, "--build-only",
                                                     "--html", "chapters/report.html"],
     ["--html chapters/report.html", "inside the course's chapters/"], False),
    ("junit inside the course's skeletons",
     lambda p: ["grade", p.sub, "--build-only", "--junit",
                ROOT / "skeletons" / "ch01_programming_model" / "report.xml"],
     ["--junit", "inside the course's skeletons/"], False),
    ("json over the student's notes", lambda p: ["grade", p.sub, "--build-only",
                                                 "--json", p.notes],
     ["--json", "exists and is not a JSON report"], False),
    ("json over a course file", lambda p: ["grade", p.sub, "--build-only",
                                           "--json", "meson.build"],
     ["--json meson.build", "exists and is not a JSON report"], False),
    ("junit over a JSON report", lambda p: ["grade", p.sub, "--build-only",
                                            "--junit", p.report],
     ["--junit", "is not a JUnit XML file"], False),
    ("json onto a folder", lambda p: ["grade", p.sub, "--build-only", "--json", p.top],
     ["--json", "is a folder"], False),
    ("build-dir inside the submission", lambda p: ["grade", p.sub, "--build-only",
                                                   "--build-dir", p.sub / "build"],
     ["--build-dir", "inside the submission"], False),
    ("build-dir holding the course", lambda p: ["grade", p.sub, "--build-only",
                                                "--build-dir", ROOT.parent],
     ["--build-dir", "holds the course"], False),
    ("build-dir a file", lambda p: ["grade", p.sub, "--build-only", "--build-dir", p.notes],
     ["--build-dir", "is a file"], False),
    ("gradescope results of a build-only run",
     lambda p: ["grade", p.sub, "--build-only", "--gradescope", p.top / "gs.json"],
     ["--gradescope writes a score", "--build-only"], False),
    ("prairielearn results of a build-only run",
     lambda p: ["grade", p.sub, "--build-only", "--prairielearn", p.top / "pl.json"],
     ["--prairielearn writes a score", "--build-only"], False),
    ("render gradescope results of a build-only report",
     lambda p: ["render", p.build_only, "--gradescope", p.top / "gs.json"],
     ["--gradescope writes a score", "--build-only run"], False),
    ("render junit over a source file",
     lambda p: ["render", p.report, "--junit", p.sub / SOURCE],
     ["--junit", "source file's extension"], False),
    ("prairielearn-run of an unknown exercise",
     lambda p: ["prairielearn-run", "--student", p.sub, "--results", p.top / "pl.json",
                "-e", "vector_ad"], ["unknown exercise or chapter 'vector_ad'"], False),
    ("prairielearn-run results over a source file",
     lambda p: ["prairielearn-run", "--student", p.sub, "--results", p.sub / SOURCE],
     ["--results", "source file's extension (.cu)"], False),
    ("prairielearn-run results over the student's notes",
     lambda p: ["prairielearn-run", "--student", p.top / "student", "--results", p.notes],
     ["--results", "exists and is not a JSON report"], False),
    ("classroom-points of an unknown chapter",
     lambda p: ["classroom-points", p.report, "--chapter", "ch09", "--max-score", "10"],
     ["--chapter ch09", "ch01_programming_model", "ch07_dynamic_parallelism"], False),
    ("classroom-points out of 0", lambda p: ["classroom-points", p.report, "--chapter",
                                             "ch01_programming_model", "--max-score", "0"],
     ["--max-score 0", "above 0"], False),
    ("export-gradescope into the course's chapters",
     lambda p: ["export-gradescope", "chapters/autograder.zip"],
     ["export-gradescope", "inside the course's chapters/"], False),
    ("export-gradescope over the student's notes",
     lambda p: ["export-gradescope", p.notes], ["export-gradescope", "is not a zip"], False),
    ("export-template into the course's skeletons",
     lambda p: ["export-template", "skeletons/template"],
     ["export-template", "inside the course's skeletons/"], False),
    ("submission folder named in another encoding",
     lambda p: ["grade", p.not_utf8, "--build-only"], ["caf\\xe9", "not UTF-8"], False),
    ("calibrate with a margin that is no fraction",
     lambda p: ["calibrate", "--from-report", p.report, "--out", p.top / "cal", "--margin", "2"],
     ["--margin 2", "fraction"], False),
    ("calibrate a threshold without a value",
     lambda p: ["calibrate", "--from-report", p.report, "--out", p.top / "cal",
                "--full-at", "vector_add/bandwidth"], ["--full-at", "EXERCISE/METRIC=VALUE"],
     False),
    ("calibrate into the course's chapters",
     lambda p: ["calibrate", "--from-report", p.report, "--out", "chapters/cal"],
     ["--out", "inside the course's chapters/"], False),
    ("calibrate onto the student's notes",
     lambda p: ["calibrate", "--from-report", p.report, "--out", p.notes],
     ["--out", "is a file"], False),
    ("calibrate from a build-only report",
     lambda p: ["calibrate", "--from-report", p.build_only, "--out", p.top / "cal"],
     ["--build-only run", "measured nothing"], False),
    ("calibrate decision that is none of keep, lower, drop",
     lambda p: ["calibrate", "--decide", "vector_add/bandwidth=raise", "--file",
                p.top / "cal.json"], ["--decide", "keep", "lower", "drop"], False),
    # Folders it cannot write: each says so on one line instead of a traceback.
    ("read-only build-dir", lambda p: ["grade", p.sub, "--build-only",
                                       "--build-dir", p.locked],
     ["--build-dir", "cannot be written", "permission denied"], True),
    ("build-dir under a read-only folder",
     lambda p: ["grade", p.sub, "--build-only", "--build-dir", p.locked / "build"],
     ["--build-dir", "cannot make it", "permission denied"], True),
    ("json into a read-only folder",
     lambda p: ["grade", p.sub, "--build-only", "--build-dir", p.top / "build",
                "--json", p.locked / "report.json"],
     ["--json", "cannot be written", "permission denied"], True),
    ("export-template into a read-only folder",
     lambda p: ["export-template", p.locked / "template"],
     ["export-template", "cannot be written", "permission denied"], True),
    ("export-template onto an empty read-only folder",
     lambda p: ["export-template", p.locked], ["export-template", "cannot be written"], True),
    ("export-gradescope into a read-only folder",
     lambda p: ["export-gradescope", p.locked / "autograder.zip"],
     ["export-gradescope", "cannot be written", "permission denied"], True),
    ("gradescope-run results into a read-only folder",
     lambda p: ["gradescope-run", "--upload", p.sub, "--results", p.locked / "results.json"],
     ["--results", "cannot be written"], True),
    ("prairielearn-run results into a read-only folder",
     lambda p: ["prairielearn-run", "--student", p.sub, "--results", p.locked / "results.json"],
     ["--results", "cannot be written"], True),
    ("calibrate into a read-only folder",
     lambda p: ["calibrate", "--from-report", p.report, "--out", p.locked],
     ["--out", "cannot be written", "permission denied"], True),
]


def _unprivileged() -> list[str]:
    """The command prefix that runs the grader as nobody when the tests run as root (util-linux
    setpriv); none otherwise, where a folder's mode is enough."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: root writes anywhere")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def _run(args, prefix=()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, PYTHON, "-m", "grader", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


# Course paths the rows aim at: none may appear, and meson.build must stay as it is.
AIMED_AT = [ROOT / "chapters" / "report.html", ROOT / "chapters" / "autograder.zip",
            ROOT / "skeletons" / "ch01_programming_model" / "report.xml",
            ROOT / "skeletons" / "template", ROOT / "chapters" / "cal"]


def _snapshot(top: Path) -> dict:
    files = {p: p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}
    files[ROOT / "meson.build"] = (ROOT / "meson.build").read_bytes()
    return files


def _param(row):
    # A student template refuses export-gradescope before reading its arguments.
    marks = [needs_solutions] if row[0].startswith("export-gradescope") else []
    return pytest.param(*row[1:], id=row[0], marks=marks)


@pytest.mark.parametrize("args, fragments, read_only", [_param(row) for row in ROWS])
def test_a_bad_input_is_one_line_and_exit_2(places, args, fragments, read_only):
    prefix = _unprivileged() if read_only else []
    if prefix and _run(["--version"], prefix).returncode != 0:
        pytest.skip("an unprivileged user cannot run the grader here, and root writes anywhere")
    before = _snapshot(places.top)
    result = _run(args(places), prefix)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [l for l in result.stderr.splitlines() if not l.startswith("grader: warning: ")]
    assert len(lines) == 1 and lines[0].startswith("grader: error: "), result.stderr
    for fragment in fragments:
        assert fragment.lower() in lines[0].lower(), (fragment, lines[0])
    assert result.stdout == ""
    # Refused before any work: nothing was written over, and nothing added.
    assert _snapshot(places.top) == before
    assert [p for p in AIMED_AT if p.exists()] == []


def test_the_table_covers_each_bad_input_of_the_issue():
    # The issue's list: non-UTF-8 names, read-only destinations (build folder, template,
    # Gradescope zip), --fail-under out of range and on a build-only run, and report paths
    # that would replace a source or land in the sources.
    ids = " | ".join(row[0] for row in ROWS)
    for needed in ("another encoding", "read-only build-dir",
                   "export-template into a read-only", "export-gradescope into a read-only",
                   "fail-under above 100", "fail-under below 0", "fail-under on a build-only",
                   "json over a source file", "html over a source file",
                   "inside the submission", "inside the course's chapters"):
        assert needed in ids, needed


# --------------------------------------------------------- a file name that is not UTF-8

def test_a_file_name_that_is_not_utf8_is_graded_and_named(tmp_path, monkeypatch, capsys):
    """A stray file named in Latin-1 beside the student's work: the configure key used to
    raise UnicodeEncodeError; now the grade completes and a warning names the file."""
    use_fake_build_tools(monkeypatch, tmp_path)
    sub = tmp_path / "sub"
    (sub / "ch01_programming_model").mkdir(parents=True)
    (sub / SOURCE).write_text("// mine\n")
    odd = Path(os.fsdecode(bytes(sub / "ch01_programming_model") + b"/caf\xe9.cu"))
    odd.write_text("// copied from another machine\n")
    report = tmp_path / "r.json"
    status = cli.main(["grade", str(sub), "-e", "vector_add", "--build-only", "-q",
                       "--build-dir", str(tmp_path / "build"), "--json", str(report)])
    err = capsys.readouterr().err
    assert status == 0, err
    assert "Traceback" not in err
    warning = next(l for l in err.splitlines() if "not UTF-8" in l)
    assert warning.startswith("grader: warning: ") and "caf\\xe9.cu" in warning
    data = json.loads(report.read_text())
    assert data["exercises"][0]["status"] == "skipped"  # compiled, not run


def test_the_configure_key_takes_any_file_name(tmp_path):
    sub = tmp_path / "sub"
    (sub / "ch01_programming_model").mkdir(parents=True)
    options = GradeOptions(root=ROOT, submission=sub, build_dir=tmp_path / "b", seed=1)
    plain = build.configure_key(options, ["s"])
    Path(os.fsdecode(bytes(sub / "ch01_programming_model") + b"/\xff.cu")).write_text("x")
    odd = build.configure_key(options, ["s"])
    assert odd != plain  # the file is in the key, as any other file is
    assert build.configure_key(options, ["s"]) == odd


def test_an_error_naming_a_path_that_is_not_utf8_prints(capsys):
    # A message holding os.fsdecode's surrogates must print, escaped, not fail the print.
    assert cli.printable("caf\udce9.cu") == "caf\\xe9.cu"
    assert cli.printable("plain ✓") == "plain ✓"


def test_a_refused_report_path_never_reaches_the_build(tmp_path, monkeypatch, capsys):
    # In process, so that a build would be seen: none starts.
    from grader import pipeline
    started = []
    monkeypatch.setattr(pipeline.Grader, "run", lambda self: started.append(1))
    sub = tmp_path / "sub"
    (sub / "ch01_programming_model").mkdir(parents=True)
    (sub / SOURCE).write_text("// mine\n")
    assert cli.main(["grade", str(sub), "--build-only", "--json", str(sub / SOURCE)]) == 2
    assert started == [] and (sub / SOURCE).read_text() == "// mine\n"
    assert "source file's extension" in capsys.readouterr().err


def test_a_report_replaces_an_earlier_report_atomically(tmp_path):
    path = tmp_path / "r.json"
    render.write_json(sample_report(), path)
    render.write_json(sample_report(), path)  # a report replaces a report
    assert json.loads(path.read_text())["score"] == 200
    with pytest.raises(UnicodeEncodeError):
        render.write_atomically(path, "half a report \udce9")
    # The failed write left the old report whole and no temporary file behind.
    assert json.loads(path.read_text())["score"] == 200
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
    assert cli._looks_like(path, "json") and not cli._looks_like(path, "xml")
