"""The student template (python3 -m grader export-template): what it holds, that no solution
code reached it, and that its own test command passes in it (compiling every skeleton once:
test_the_template_passes_its_own_test_command is the one slow test here)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from grader import exports, manifest, skeletons, template
from helpers import PYTHON, ROOT, assert_one_line_error, needs_solutions, run_cli

pytestmark = needs_solutions  # the template is exported from the course, solutions and all


def _normal(line: str) -> str:
    return " ".join(line.split())


def _code(line: str) -> bool:
    """A line that carries code: not blank, not only braces and punctuation, not a comment."""
    return bool(re.search(r"[A-Za-z0-9]", line)) and not line.startswith(("//", "/*", "*"))


def solution_blocks() -> list[tuple[str, list[str]]]:
    """(file, code lines) of every @begin-solution ... @end-solution block under solutions/
    with 3 or more code lines, whitespace normalised; hint and stub lines left out."""
    blocks = []
    for path in sorted((ROOT / "solutions").rglob("*")):
        if not path.is_file() or path.suffix not in skeletons.SOURCE_SUFFIXES:
            continue
        body: list[str] | None = None
        for line in path.read_text(encoding="utf-8").splitlines():
            text = _normal(line)
            if text.startswith(skeletons.BEGIN):
                body = []
            elif text.startswith(skeletons.END):
                if len(body) >= 3:
                    blocks.append((path.relative_to(ROOT).as_posix(), body))
                body = None
            elif body is not None and _code(text):
                body.append(text)
    return blocks


def code_of(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        return ""
    return "\n".join(t for t in map(_normal, lines) if _code(t)) + "\n"


def leaks(folder: Path) -> list[str]:
    """Files under folder holding the code of a whole solution block."""
    found = []
    texts = {p: code_of(p) for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts}
    for source, body in solution_blocks():
        needle = "\n".join(body) + "\n"
        found += [f"{p.relative_to(folder)} holds a block of {source}"
                  for p, text in texts.items() if needle in text]
    return found


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student") / "course"
    result = run_cli("export-template", out)
    assert result.returncode == 0, result.stderr
    assert "wrote a student template" in result.stderr
    return out


def test_the_exclusions_are_one_constant():
    for rel in ("solutions/ch01_programming_model/vector_add.cu",
                "tests/fixtures/submissions/ch01_broken_mix/expect.toml",
                "scripts/gpu_check.sh", "docs/instructor_notes.md",
                "chapters/ch01_programming_model/Hidden/x.cpp",
                "tests/instructor/test_x.py", "grader/__pycache__/cli.cpython-311.pyc",
                "chapters/ch01_programming_model/vector_add/vector_add_hidden_test.cpp"):
        assert template.excluded(rel), rel
    for rel in ("skeletons/ch01_programming_model/vector_add.cu", "tests/test_cli.py",
                "tests/fixtures_readme.md", "scripts/grade.sh", "docs/architecture.md",
                "docs/instructors.md", "grader/hidden.py"):
        assert not template.excluded(rel), rel


def test_the_template_holds_the_course_without_answers(exported):
    for path in ("chapters", "skeletons", "support", "grader", "scripts/setup.sh",
                 "scripts/test.sh", "scripts/grade.sh", "docs", "meson.build", "meson.options",
                 "requirements.txt", "pytest.ini", "README.md", ".gitignore", ".ci/run",
                 "tests/test_cli.py", "tests/helpers.py", template.MARKER,
                 ".github/workflows/classroom.yml",
                 "workspace/ch01_programming_model/vector_add.cu"):
        assert (exported / path).exists(), path
    for path in ("solutions", "tests/fixtures/submissions", "scripts/gpu_check.sh", ".venv",
                 "build"):
        assert not (exported / path).exists(), path
    assert not list(exported.rglob("__pycache__"))
    assert os.access(exported / "scripts" / "test.sh", os.X_OK) == \
        os.access(ROOT / "scripts" / "test.sh", os.X_OK)
    workflow = (exported / ".github" / "workflows" / "classroom.yml").read_text()
    assert workflow == exports.classroom_workflow(manifest.discover(ROOT))
    # The student's repository tracks their workspace.
    assert "/workspace/" not in (exported / ".gitignore").read_text().splitlines()


# Course baselines that students see on purpose and that equal a simple solution block
# (the naive kernel the exercise starts from): the benchmark compares against them.
KNOWN_BASELINES = {
    "chapters/ch03_global_memory/transpose_global/transpose_global_baseline.cu holds a block "
    "of solutions/ch03_global_memory/transpose_global.cu",
    "chapters/ch04_shared_memory/histogram/histogram_baseline.cu holds a block of "
    "solutions/ch04_shared_memory/histogram.cu"}


def test_no_solution_block_reached_the_template(exported):
    blocks = solution_blocks()
    assert len(blocks) >= 20  # the check has something to look for
    # It finds them where they are: in the course's own solutions/.
    assert len(leaks(ROOT / "solutions")) >= len(blocks)
    assert set(leaks(exported)) - KNOWN_BASELINES == set()


def test_the_template_is_one_clean_git_commit(exported):
    def git(*args):
        return subprocess.run(["git", *args], cwd=exported, capture_output=True, text=True,
                              check=True).stdout
    assert len(git("log", "--oneline").splitlines()) == 1
    assert git("status", "--porcelain") == ""
    tracked = git("ls-files").splitlines()
    assert template.MARKER in tracked and ".github/workflows/classroom.yml" in tracked
    assert "workspace/ch01_programming_model/vector_add.cu" in tracked


def test_the_template_knows_it_has_no_solutions(exported):
    result = run_cli("skeletons", cwd=exported)
    assert result.returncode == 2
    assert_one_line_error(result.stderr, template.NO_SOLUTIONS)
    again = run_cli("export-template", exported / "x", cwd=exported)
    assert again.returncode == 2
    assert_one_line_error(again.stderr, template.NO_SOLUTIONS)


def test_export_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    result = run_cli("export-template", tmp_path)
    assert result.returncode == 2
    assert_one_line_error(result.stderr, "not an empty folder")
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_export_without_git(tmp_path):
    result = run_cli("export-template", tmp_path / "plain", "--no-git")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "plain" / template.MARKER).is_file()
    assert not (tmp_path / "plain" / ".git").exists()


@pytest.mark.skipif(shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists(),
                    reason="no CUDA toolkit (nvcc): the template's test command compiles CUDA")
def test_the_template_passes_its_own_test_command(exported):
    """bash scripts/test.sh in the template: its Python tests (those needing solutions skip,
    saying so), every skeleton compiled once, the support library's host tests."""
    env = {**os.environ, "PATH": f"{Path(PYTHON).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "scripts/test.sh"], cwd=exported, env=env,
                            capture_output=True, text=True, timeout=1500)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "test.sh: all passed" in output
    assert (exported / "build" / "ci" / "skeletons.json").is_file()
    assert not (exported / "build" / "ci" / "solutions").exists()
    assert "meson test (skeletons build)" in output
