"""The student template: a copy of the course without the answers.

`python3 -m grader export-template OUT` copies what a student needs (INCLUDED) minus what
gives answers away or belongs to instructors (EXCLUDED), marks the copy with MARKER, makes
its workspace/ from the skeletons, and commits it all as one git commit, ready to push as a
GitHub template repository. In a marked copy the grader and the tests know that solutions/
is not there: `skeletons` refuses with NO_SOLUTIONS, and the tests that need it skip.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from pathlib import Path

from grader import workspace
from grader.errors import GraderError

MARKER = ".course-template"
NO_SOLUTIONS = "this is a student template: solutions are not included"

# What a student's repository holds (paths relative to the course root).
INCLUDED = ("chapters", "skeletons", "support", "grader", "scripts", "docs", "tests",
            "meson.build", "meson.options", "requirements.txt", "pytest.ini", "README.md",
            ".gitignore", ".ci/run")
# Never copied: the answers (solutions/, and the fixtures, several of which are solution code
# with one thing changed); instructor-only material: hidden test sources (grader/hidden.py:
# <name>_hidden_test.cpp) and anything in a folder named instructor, instructor_* or hidden;
# the GPU check and the tools only it runs (the shared-GPU check grades copies of solutions/,
# with a program that keeps the GPU busy); caches. An entry with a slash matches that path and
# everything under it; one without matches any folder or file name on the way (any case).
EXCLUDED = ("solutions", "tests/fixtures/submissions", "scripts/gpu_check.sh",
            "scripts/check_shared_gpu.py", "scripts/gpu_hog.cu",
            "*_hidden_test.*", "instructor", "instructor_*", "hidden", "__pycache__", "*.pyc",
            ".pytest_cache")
# The student's own repository tracks their work, so the template's .gitignore must not
# ignore workspace/ (the course's own .gitignore does).
_WORKSPACE_IGNORE = f"/{workspace.WORKSPACE}/"


def is_template(root: Path) -> bool:
    return (Path(root) / MARKER).is_file()


def excluded(rel: str) -> bool:
    parts = rel.split("/")
    for pattern in EXCLUDED:
        if "/" in pattern:
            if rel == pattern or rel.startswith(pattern + "/"):
                return True
        elif any(fnmatch.fnmatch(part.lower(), pattern) for part in parts):
            return True
    return False


def files(root: Path) -> list[str]:
    """Relative paths of every file the template gets, sorted."""
    root = Path(root)
    found = []
    for entry in INCLUDED:
        path = root / entry
        if path.is_file():
            candidates = [path]
        elif path.is_dir():
            candidates = [p for p in path.rglob("*") if p.is_file()]
        else:
            continue
        found += [p.relative_to(root).as_posix() for p in candidates]
    return sorted(rel for rel in set(found) if not excluded(rel))


def copy_course(root: Path, out: Path) -> list[str]:
    """Copies the template's files (with their permission bits: scripts stay executable)
    and writes the marker; returns the files copied."""
    copied = files(root)
    for rel in copied:
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
        if rel == ".gitignore":
            lines = target.read_text(encoding="utf-8").splitlines()
            target.write_text("".join(f"{line}\n" for line in lines
                                      if line.strip() != _WORKSPACE_IGNORE), encoding="utf-8")
    (out / MARKER).write_text(
        "This is a student copy of the course, made by 'python3 -m grader export-template'.\n"
        "It holds no solutions/: the grader and the tests know it by this file.\n",
        encoding="utf-8")
    return copied


def check_target(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise GraderError(f"{out} exists and is not an empty folder; give a new folder")


def export(root: Path, out: Path, git: bool = True,
           extra: dict[str, str] | None = None) -> list[str]:
    """Writes the student template into out (new or empty); returns the files written.
    extra: further files (relative path -> text), e.g. the Classroom workflow."""
    root, out = Path(root), Path(out)
    check_target(out)
    if is_template(root):
        raise GraderError(f"{NO_SOLUTIONS}; export from the course itself")
    out.mkdir(parents=True, exist_ok=True)
    written = copy_course(root, out) + [MARKER]
    for rel, text in (extra or {}).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
        written.append(rel)
    written += [f"{workspace.WORKSPACE}/{rel}" for rel in workspace.init(out)]
    if git:
        _git_commit(out)
    return sorted(written)


def _git_commit(out: Path) -> None:
    if shutil.which("git") is None:
        raise GraderError("git not found: install it, or export with --no-git")
    # A fixed author when none is configured, so an export works on a fresh CI machine.
    env = {**os.environ, "GIT_AUTHOR_NAME": os.environ.get("GIT_AUTHOR_NAME", "course"),
           "GIT_AUTHOR_EMAIL": os.environ.get("GIT_AUTHOR_EMAIL", "course@localhost"),
           "GIT_COMMITTER_NAME": os.environ.get("GIT_COMMITTER_NAME", "course"),
           "GIT_COMMITTER_EMAIL": os.environ.get("GIT_COMMITTER_EMAIL", "course@localhost")}
    for command in (["init", "-q", "-b", "main"], ["add", "-A"],
                    ["commit", "-q", "-m", "Course template"]):
        result = subprocess.run(["git", *command], cwd=out, env=env, capture_output=True,
                                text=True)
        if result.returncode != 0:
            reason = (result.stderr.strip().splitlines() or ["no message"])[-1]
            raise GraderError(f"git {command[0]} in {out} failed: {reason}")

