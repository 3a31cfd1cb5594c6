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

from grader import manifest  # noqa: E402

PYTHON = sys.executable
FIXTURES = TESTS / "fixtures" / "submissions"
VECTOR_ADD = ROOT / "chapters" / "ch01_programming_model" / "vector_add" / "vector_add.toml"


def run_cli(*args, cwd: Path = ROOT, timeout: float = 60, env=None):
    """python -m grader ARGS, as a student would run it."""
    return subprocess.run([PYTHON, "-m", "grader", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


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
