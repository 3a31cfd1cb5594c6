"""The integrity and technique stages on real compiled code, without a GPU: every fixture whose
expect.toml names technique verdicts or expects a rejection is built with nvcc (--build-only,
its exercises only); a rejection is checked in full (status, points, messages), the other
exercises' technique verdicts and messages (fixture_expect.technique_mismatches). A fixture with
patches is built as its materialised copy (tests/fixture_files.py).

Not skipped when cuobjdump is missing: scripts/setup.sh installs it, and a CI that cannot find
it must fail rather than pass by checking nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fixture_expect
import fixture_files
from grader import tools
from helpers import run_cli

BUILD_TIMEOUT_S = 1200


@pytest.mark.parametrize("directory", fixture_expect.static_dirs(), ids=lambda p: p.name)
def test_static_verdicts(directory: Path, tmp_path):
    assert tools.find("cuobjdump") and tools.find("nvdisasm"), \
        "cuobjdump or nvdisasm not found: run scripts/setup.sh (it installs NVIDIA's wheels)"
    expect = fixture_expect.load(directory)
    report_path = tmp_path / "report.json"
    args = ["grade", fixture_files.submission(directory), "--build-only", "-q", "--json",
            report_path]
    for name in expect["exercises"]:
        args += ["-e", name]
    result = run_cli(*args, timeout=BUILD_TIMEOUT_S)
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

