"""The integrity and technique stages on real compiled code, without a GPU: every fixture whose
expect.toml names technique verdicts or expects a rejection is built with nvcc (--build-only,
its exercises only); a rejection is checked in full (status, points, messages), the other
exercises' technique verdicts and messages (fixture_expect.technique_mismatches). A fixture with
patches is built as its materialised copy (tests/fixture_files.py).

The fixtures are graded ahead, as many at once as the machine has cores (at most 8;
COURSE_TEST_JOBS=N sets it; each grade is mostly one nvcc process at a time), each worker in a
build folder of its own that its grades take in turn. A fixture is graded as its files laid
over every solution's in the worker's submission folder (fixture_files.overlaid), so the
folder is configured once and each grade compiles only what differs from the one before (the
course's own code is built once per folder); a fixture with a link or a '../' is graded where
it is, which configures the folder again. Each test waits for its own fixture's grade and
checks it; a run of a few tests (-k) grades only those.

Not skipped when cuobjdump is missing: scripts/setup.sh installs it, and a CI that cannot find
it must fail rather than pass by checking nothing.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

import fixture_expect
import fixture_files
from grader import tools
from helpers import ROOT, run_cli

BUILD_TIMEOUT_S = 1200
# The workers' build folders: at the depth of the grader's own (build/grade/<name>), where the
# compiler cache shares the course's objects with every other build of the course.
BUILD_DIRS = ROOT / "build" / "grade"
WORKERS = int(os.environ.get("COURSE_TEST_JOBS", "0")) or min(os.cpu_count() or 1, 8)


def _tools_found() -> bool:
    return bool(tools.find("cuobjdump") and tools.find("nvdisasm"))


def _grade(directory: Path, build_dirs: "queue.Queue[Path]", scratch: Path
           ) -> tuple[subprocess.CompletedProcess, Path]:
    """--build-only grade of the fixture's exercises in a free worker's build folder."""
    expect = fixture_expect.load(directory)
    report_path = scratch / f"{directory.name}.json"
    only = [arg for name in expect["exercises"] for arg in ("-e", name)]
    build_dir = build_dirs.get()
    try:
        # Over every solution, in the worker's own folder: the folder keeps its configure
        # (a Meson setup costs more than the compile of a fixture's file).
        submission = fixture_files.overlaid(directory, build_dir.with_name(
            build_dir.name + "-submission")) or fixture_files.submission(directory)
        return run_cli("grade", submission, "--build-only", "-q", "--json", report_path, *only,
                       "--build-dir", build_dir, timeout=BUILD_TIMEOUT_S), report_path
    finally:
        build_dirs.put(build_dir)


@pytest.fixture(scope="module")
def grades(request, tmp_path_factory) -> dict[Path, Future]:
    """fixture folder -> the future of its grade, for the fixtures this session's tests check;
    the largest first, so that no worker is left with a long one at the end."""
    wanted = [item.callspec.params["directory"] for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")
              and "directory" in item.callspec.params]
    if not wanted or not _tools_found():
        yield {}
        return
    wanted.sort(key=lambda d: -len(fixture_expect.load(d)["exercises"]))
    build_dirs: queue.Queue[Path] = queue.Queue()
    for i in range(min(WORKERS, len(wanted))):
        build_dirs.put(BUILD_DIRS / f"static-verdicts-{i}")
    scratch = tmp_path_factory.mktemp("static-verdicts")
    with ThreadPoolExecutor(max_workers=build_dirs.qsize()) as pool:
        futures = {d: pool.submit(_grade, d, build_dirs, scratch) for d in wanted}
        try:
            yield futures
        finally:
            for future in futures.values():
                future.cancel()


@pytest.mark.parametrize("directory", fixture_expect.static_dirs(), ids=lambda p: p.name)
def test_static_verdicts(directory: Path, grades):
    assert _tools_found(), \
        "cuobjdump or nvdisasm not found: run scripts/setup.sh (it installs NVIDIA's wheels)"
    expect = fixture_expect.load(directory)
    result, report_path = grades[directory].result()
    # --build-only exits 1 when an exercise does not compile or is rejected, 0 otherwise.
    rejects = any(fixture_expect.rejected_only(spec) for spec in expect["exercises"].values())
    assert result.returncode == (1 if rejects else 0), \
        f"{result.stderr[-3000:]}\n{result.stdout[-3000:]}"
    graded = {e["name"]: e for e in json.loads(report_path.read_text())["exercises"]}
    problems = []
    for name, spec in expect["exercises"].items():
        exercise = graded[name]
        if fixture_expect.rejected_only(spec):
            problems += fixture_expect.mismatches(spec, exercise)
            continue
        if exercise["status"] != "skipped":  # --build-only: compiled, not run
            problems.append(f"{name}: {exercise['status']} ({exercise['message']})")
        problems += fixture_expect.technique_mismatches(spec, exercise)
    assert not problems, "\n".join(problems) + "\n\n" + result.stdout[-4000:]
