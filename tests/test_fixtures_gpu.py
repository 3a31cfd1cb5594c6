"""Grade every fixture under tests/fixtures/submissions/<name>/ that has an expect.toml with
the real grader (build, tests, sanitizer, benchmark) and check the report against it. A fixture
with patches is graded as its materialised copy (tests/fixture_files.py).

Needs an NVIDIA GPU; skipped without one. COURSE_FIXTURE_REPORTS=<dir> keeps each report
there as fixture-<name>.json; COURSE_FIXTURES narrows the fixtures (see fixture_expect.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import fixture_expect
import fixture_files
from grader import tools
from helpers import PYTHON, ROOT, needs_solutions

# A marker rather than a module-level skip: the test stays collected (and reported as
# skipped), so running this file alone on a machine without a GPU exits 0, not 5.
# COURSE_REQUIRE_GPU=1 (set by scripts/gpu_check.sh) turns the skip into a failure, so a GPU
# check can never pass by skipping these.
pytestmark = [pytest.mark.gpu, needs_solutions,
              pytest.mark.skipif(tools.query_gpu() is None
                                 and os.environ.get("COURSE_REQUIRE_GPU") != "1",
                                 reason="no NVIDIA GPU (nvidia-smi lists none): fixtures are "
                                 "graded on a GPU only")]
GRADE_TIMEOUT_S = 1700


@pytest.mark.parametrize("directory", fixture_expect.fixture_dirs(), ids=lambda p: p.name)
def test_fixture(directory: Path, tmp_path):
    expect = fixture_expect.load(directory)
    names = list(expect["exercises"])
    report_path = tmp_path / "report.json"
    command = [PYTHON, "-m", "grader", "grade", str(fixture_files.submission(directory)),
               "--json", str(report_path), "-q"]
    for name in names:
        command += ["-e", name]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                            timeout=GRADE_TIMEOUT_S)
    keep = os.environ.get("COURSE_FIXTURE_REPORTS")
    if keep and report_path.is_file():
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report_path, Path(keep) / f"fixture-{directory.name}.json")
    assert result.returncode == 0, (
        f"grader exit status {result.returncode}\n{result.stderr[-3000:]}\n"
        f"{result.stdout[-3000:]}")
    data = json.loads(report_path.read_text(encoding="utf-8"))
    graded = {e["name"]: e for e in data["exercises"]}
    problems = []
    for name, spec in expect["exercises"].items():
        if name not in graded:
            problems.append(f"{name}: not in the report")
            continue
        problems += fixture_expect.mismatches(spec, graded[name])
    assert not problems, "\n".join(problems) + "\n\n" + result.stdout[-4000:]
