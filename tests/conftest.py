"""Shared paths and helpers for the course's tests.

The CPU suite (everything but test_fixtures_gpu.py) needs no GPU, nvcc or compute-sanitizer:
the grader's programs are replaced by the stand-ins in tests/fakes.py.
"""

from __future__ import annotations

import faulthandler
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from helpers import (FIXTURES, PYTHON, ROOT, VECTOR_ADD, assert_one_line_error,  # noqa: E402,F401
                     make_student, run_cli, vector_add)
from grader import manifest  # noqa: E402
from grader.pipeline import GradeOptions, Grader  # noqa: E402


@pytest.fixture
def roster(tmp_path):
    """A batch roster: five students in a folder, alice, bob, carol, dave, eve."""
    folder = tmp_path / "students"
    for sid in ("alice", "bob", "carol", "dave", "eve"):
        make_student(folder, sid)
    return folder


@pytest.fixture
def grader_for(tmp_path):
    """grader_for(exercise, **options) -> Grader with a submission holding the exercise's
    files and a build directory where the fake binaries go (build_dir/<name>_test, _bench)."""

    def make(ex: manifest.Exercise, *, submit: bool = True, gpu=None, **options) -> Grader:
        submission = tmp_path / "submission"
        folder = submission / ex.chapter
        folder.mkdir(parents=True, exist_ok=True)
        if submit:
            for f in ex.files:
                (folder / f).write_text("// submitted\n")
        build = tmp_path / "build"
        build.mkdir(exist_ok=True)
        opts = GradeOptions(root=ROOT, submission=submission, build_dir=build, seed=1234,
                            **options)
        return Grader(opts, [ex], gpu=gpu)

    return make


# ------------------------------------------------------------------------------------------
# scripts/gpu_check.sh runs "pytest --timeout=1800"; without the pytest-timeout plugin that
# option would be refused. This fallback accepts it and, per test, dumps every thread's
# traceback and ends the run when the limit passes.

def pytest_addoption(parser, pluginmanager):
    if not pluginmanager.hasplugin("timeout"):
        parser.addoption("--timeout", type=float, default=0.0, metavar="SECONDS",
                         help="per-test time limit (fallback used when pytest-timeout is "
                         "not installed: dumps tracebacks and exits)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if item.config.pluginmanager.hasplugin("timeout"):
        yield
        return
    limit = item.config.getoption("--timeout", 0.0) or 0.0
    if limit > 0:
        faulthandler.dump_traceback_later(limit, exit=True)
    try:
        yield
    finally:
        if limit > 0:
            faulthandler.cancel_dump_traceback_later()
