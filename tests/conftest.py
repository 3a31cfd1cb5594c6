"""Shared paths and helpers for the course's tests.

The CPU suite (everything but test_fixtures_gpu.py) needs no GPU, nvcc or compute-sanitizer:
the grader's programs are replaced by the stand-ins in tests/fakes.py.
"""

from __future__ import annotations

import compileall
import faulthandler
import json
import os
import resource
import time
import shutil
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


def pytest_sessionstart(session):
    """Where Python writes no bytecode (PYTHONDONTWRITEBYTECODE, as some shells and CI set),
    each of the suite's hundreds of `python -m grader` programs would compile the grader from
    source again (a quarter of a second each): it is compiled once here, as a first import
    would have written it without that setting (__pycache__, which git ignores)."""
    if sys.flags.dont_write_bytecode:
        compileall.compile_dir(ROOT / "grader", quiet=2)


class CpuCosts:
    """pytest --cpu-costs PATH: on CI's two cores the suite is bound by the CPU, so what a test
    costs is its CPU time, which --durations (wall time) does not show. Each test appends a JSON
    line to PATH (xdist's workers share the file): its CPU seconds, its own and those of the
    programs it waited for, and its wall seconds. A module-scoped fixture's set-up counts
    towards the first test that uses it; a program no test waited for (a daemon) counts
    towards none. scripts/test_costs.py sums them up."""

    def __init__(self, path: str):
        self.path = path

    @staticmethod
    def cpu_seconds() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        waited = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cpu, wall = self.cpu_seconds(), time.monotonic()
        yield
        line = json.dumps({"test": item.nodeid, "cpu_s": round(self.cpu_seconds() - cpu, 3),
                           "wall_s": round(time.monotonic() - wall, 3)})
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def pytest_addoption(parser, pluginmanager):
    parser.addoption("--cpu-costs", metavar="PATH", default=None,
                     help="append each test's CPU and wall seconds to PATH, a JSON line per "
                          "test (CpuCosts; scripts/test_costs.py sums them up)")
    if not pluginmanager.hasplugin("timeout"):
        parser.addoption("--timeout", type=float, default=0.0, metavar="SECONDS",
                         help="per-test time limit (fallback used when pytest-timeout is "
                         "not installed: dumps tracebacks and exits)")


def pytest_configure(config):
    path = config.getoption("--cpu-costs", None)
    if path:
        config.pluginmanager.register(CpuCosts(path), "course-cpu-costs")


def pytest_deselected(items):
    """Where COURSE_DESELECTED_FILE names a file, how many tests -m or -k left out is added to
    it, one line per call: a parallel run (pytest-xdist) prints no such count, and
    tests/test_template_command.py checks that the template's run left some out."""
    path = os.environ.get("COURSE_DESELECTED_FILE")
    if path and items:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{len(items)}\n")


@pytest.fixture
def course_build_dir(tmp_path):
    """A build folder at the depth of the grader's own (build/grade/<name>), removed after the
    test. ccache keys nvcc's results on the paths relative to the build folder: built here, the
    course's own code is the compiler cache's, shared with every other build of the course
    (scripts/test.sh's, the fixtures'), where one under tmp_path compiles it all again."""
    path = ROOT / "build" / "grade" / f"test-{os.getpid()}-{tmp_path.name}"
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """A student template exported from the course (export-template), once per module."""
    out = tmp_path_factory.mktemp("student") / "course"
    result = run_cli("export-template", out)
    assert result.returncode == 0, result.stderr
    assert "wrote a student template" in result.stderr
    return out


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
# traceback and ends the run when the limit passes (the option: pytest_addoption above).

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
