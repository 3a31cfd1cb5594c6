"""The student template's own test command passes in it: bash scripts/test.sh in a freshly
exported template (python3 -m grader export-template). The slowest test of the course's run, in
a module of its own so that a parallel run (pytest-xdist, --dist loadfile) gives it a worker
while the rest of tests/test_template.py runs on another.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import PYTHON, needs_solutions

pytestmark = needs_solutions  # the template is exported from the course, solutions and all


@pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                    reason="no CUDA toolkit (nvcc): the template's test command compiles CUDA")
def test_the_template_passes_its_own_test_command(exported, tmp_path):
    """bash scripts/test.sh in the template: its Python tests (those needing solutions skip,
    saying so), every skeleton compiled once, the support library's host tests. The tests
    marked same_in_template (pytest.ini) are left out here: they read nothing the template
    leaves out, so the course's own run of them stands for both, and they are the slowest."""
    deselected = tmp_path / "deselected.txt"
    env = {**os.environ, "PATH": f"{Path(PYTHON).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTEST_ADDOPTS": "-m 'not same_in_template'",
           "COURSE_DESELECTED_FILE": str(deselected)}
    result = subprocess.run(["bash", "scripts/test.sh"], cwd=exported, env=env,
                            capture_output=True, text=True, timeout=1500)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "test.sh: all passed" in output
    counts = deselected.read_text().split() if deselected.is_file() else []
    assert any(int(c) > 0 for c in counts), "the same_in_template tests ran again"
    assert (exported / "build" / "ci" / "skeletons.json").is_file()
    assert not (exported / "build" / "ci" / "solutions").exists()
    assert "meson test (skeletons build)" in output
