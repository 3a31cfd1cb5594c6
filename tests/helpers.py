"""Paths and helpers shared by the test modules (conftest.py re-exports them)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from grader import manifest, model, proc, template  # noqa: E402
from grader.model import ExerciseStatus  # noqa: E402

PYTHON = sys.executable
FIXTURES = TESTS / "fixtures" / "submissions"
VECTOR_ADD = ROOT / "chapters" / "ch01_programming_model" / "vector_add" / "vector_add.toml"
# A student template (grader/template.py) has no solutions/ and no fixture submissions: the
# tests that need them skip there, saying why.
TEMPLATE = template.is_template(ROOT)
needs_solutions = pytest.mark.skipif(TEMPLATE, reason=template.NO_SOLUTIONS)


def run_cli(*args, cwd: Path = ROOT, timeout: float = 60, env=None):
    """python -m grader ARGS, as a student would run it (a start that fails for want of
    something of the moment is tried again, as the grader's own are)."""
    return proc.start_retrying(lambda: subprocess.run(
        [PYTHON, "-m", "grader", *map(str, args)], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=timeout))


def assert_one_line_error(stderr: str, *fragments: str) -> str:
    """The grader's 'could not run' contract: exactly one line, 'grader: error: ...'."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip("\n").splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("grader: error: "), stderr
    for fragment in fragments:
        assert fragment.lower() in lines[0].lower(), (fragment, lines[0])
    return lines[0]


def vector_add(**changes) -> manifest.Exercise:
    """The real vector_add exercise, with changes (e.g. short time limits)."""
    return dataclasses.replace(manifest.load_manifest(VECTOR_ADD), **changes)


def sample_report() -> model.Report:
    """A report with one exercise of each kind: full marks, partial, crashed, compile error,
    not submitted."""
    C, S = model.CaseResult, model.StageResult
    metric = model.Metric("bandwidth", "d", "vector_add", "copy", 550.0, 1000.0, "GB/s", 0.55,
                          0.8, 0.3, 20.0, 40.0, "0.55x copy; full marks at 0.80x")
    passed = model.ExerciseResult(
        "ch01_a/one", "one", "ch01_a", "One", ExerciseStatus.PASSED, 100.0, 100.0, "full marks", [
            S("build", "passed"),
            S("integrity", "passed", message="calls nothing it must not"),
            S("tests", "passed", 60, 60, 1.5, "all 2 cases passed",
              cases=[C("S.a", "passed", "", 1.0), C("S.b", "passed", "", 2.0)],
              details={"passed": 2, "total": 2}),
            S("benchmark", "passed", 40, 40, metrics=[dataclasses.replace(metric, ratio=0.9,
                                                                            points=40.0)])])
    partial = model.ExerciseResult(
        "ch01_a/two", "two", "ch01_a", "Two", ExerciseStatus.PARTIAL, 80.0, 100.0,
        "bandwidth: slow", [
            S("build", "passed"),
            S("integrity", "passed", message="calls nothing it must not"),
            S("tests", "passed", 60, 60, cases=[C("S.a", "passed")],
              details={"passed": 1, "total": 1}),
            S("sanitizer", "passed", message="memcheck: clean"),
            S("benchmark", "failed", 20, 40, message="bandwidth: 0.55x", metrics=[metric])])
    crashed = model.ExerciseResult(
        "ch02_b/three", "three", "ch02_b", "Three", ExerciseStatus.CRASHED, 20.0, 60.0,
        "crashed with SIGSEGV while running S.c", [
            S("build", "passed"),
            S("integrity", "passed", message="calls nothing it must not"),
            S("tests", "crashed", 20, 60, message="crashed with SIGSEGV while running S.c",
              output="[ RUN      ] S.c\n",
              cases=[C("S.a", "passed"), C("S.b", "failed", "expected 1, got nan"),
                     C("S.c", "crashed", "crashed with SIGSEGV"), C("S.d", "not_run")],
              details={"passed": 1, "total": 4})])
    compile_error = model.ExerciseResult(
        "ch02_b/four", "four", "ch02_b", "Four", ExerciseStatus.COMPILE_ERROR, 0.0, 50.0,
        "compilation failed", [S("build", "failed", message="compilation failed; the "
                                 "compiler said:", output="FAILED: four.cu.o\nerror: x")])
    missing = model.ExerciseResult("ch02_b/five", "five", "ch02_b", "Five",
                                   ExerciseStatus.NOT_SUBMITTED, 0.0, 40.0,
                                   "not submitted: five.cu")
    return model.Report(submission="/tmp/sub", seed=42, started_at="2025-01-01T00:00:00+00:00",
                        finished_at="2025-01-01T00:01:00+00:00", grader_version="1",
                        gpu=model.GpuInfo("Fake GPU", "9.0", "555", 80000), host="h",
                        options={"build_only": False},
                        exercises=[passed, partial, crashed, compile_error, missing])


def make_student(root: Path, sid: str) -> Path:
    """A student folder of a batch roster: root/sid/ch01_programming_model/vector_add.cu."""
    folder = root / sid / "ch01_programming_model"
    folder.mkdir(parents=True)
    (folder / "vector_add.cu").write_text(f"// {sid}\n")
    return root / sid


def sass_inspection(sass: str):
    """What the technique stage reads from cuobjdump -sass text, every function a kernel."""
    from grader import binary
    found = binary.Inspection()
    binary.parse_sass(sass, found)
    for function in found.functions.values():
        function.kernel = True
    return found
