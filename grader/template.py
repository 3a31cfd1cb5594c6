"""The student template: a copy of the course without the answers.

`python3 -m grader export-template OUT` copies what a student needs (INCLUDED) minus what
gives answers away or belongs to instructors (EXCLUDED), writes the student's own README
(STUDENT_README, in place of the course's), unlinks links to what it left out, marks the copy
with MARKER, makes its workspace/ from the skeletons, and commits it all as one git commit,
ready to push as a GitHub template repository. In a marked copy the grader and the tests know
that solutions/ is not there: `skeletons` refuses with NO_SOLUTIONS, and the tests that need it
skip.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
from pathlib import Path

from grader import workspace
from grader.errors import GraderError

MARKER = ".course-template"
NO_SOLUTIONS = "this is a student template: solutions are not included"

# What a student's repository holds (paths relative to the course root). Of scripts/, only what
# a student runs and what scripts/test.sh runs: the rest are instructors' tools (the GPU check,
# measurement and documentation scripts), and a new script stays out until it is listed here.
# calibrations/ ships: a student's grade applies the same thresholds on the same GPU model.
INCLUDED = ("chapters", "skeletons", "support", "grader", "docs", "tests", "calibrations",
            "scripts/setup.sh", "scripts/grade.sh", "scripts/test.sh", "scripts/check_report.py",
            "scripts/check_sanitizer_coverage.py", "scripts/draw_timeline.py",
            "meson.build", "meson.options", "requirements.txt", "pytest.ini", ".gitignore",
            ".ci/run")
# Never copied: the answers (solutions/, and the fixtures, several of which are solution code
# with one thing changed); instructor-only material: hidden test sources (grader/hidden.py:
# <name>_hidden_test.cpp), anything in a folder named instructor, instructor_* or hidden (the
# course's readable copies of graded kernels live there, e.g. the reduction ladder's rungs,
# which the course builds from their compiled form), the instructors' documents (the platforms
# and batch grading, the measurement logs, the time of a full grade, the map of the notes the
# course was built from) and the tests that read them or run the instructors' scripts
# (test_slurm.py checks its time limits against docs/grading_time.md, test_check_profile.py
# gpu_check's scripts/check_profile.py); the student README's
# source (it becomes README.md); caches. An entry with a slash matches that path and
# everything under it; one without matches any folder or file name on the way (any case).
EXCLUDED = ("solutions", "tests/fixtures/submissions", "*_hidden_test.*", "instructor",
            "instructor_*", "hidden", "docs/instructors.md", "docs/measurements",
            "docs/grading_time.md", "docs/notes_map.md", "tests/test_scripts.py",
            "tests/test_quoted_numbers.py", "tests/test_instructor_programs.py",
            "tests/test_slurm.py", "tests/test_check_profile.py",
            "grader/templates/student_README.md", "__pycache__", "*.pyc",
            ".pytest_cache")
# The template's README.md: what a student does, from clone to grade.
STUDENT_README = Path(__file__).resolve().parent / "templates" / "student_README.md"
# What stands in for a link to a file the template leaves out.
LEFT_OUT = " (in the instructors' copy of the course)"
# The student's own repository tracks their work, so the template's .gitignore must not
# ignore workspace/ (the course's own .gitignore does).
_WORKSPACE_IGNORE = f"/{workspace.WORKSPACE}/"
# A markdown link or image, [text](target) or ![alt](target); code spans are skipped.
_LINK = re.compile(r"(`+).*?\1|(!?)\[([^\]\n]*)\]\(([^)\s]+)\)", re.S)


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
    """Copies the template's files (with their permission bits: scripts stay executable),
    writes the student README and the marker, and unlinks links to files left out; returns
    the files copied and written."""
    copied = files(root)
    for rel in copied:
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
        if rel == ".gitignore":
            lines = target.read_text(encoding="utf-8").splitlines()
            target.write_text("".join(f"{line}\n" for line in lines
                                      if line.strip() != _WORKSPACE_IGNORE), encoding="utf-8")
    shutil.copyfile(STUDENT_README, out / "README.md")
    (out / MARKER).write_text(
        "This is a student copy of the course, made by 'python3 -m grader export-template'.\n"
        "It holds no solutions/: the grader and the tests know it by this file.\n",
        encoding="utf-8")
    for rel in copied:
        if rel.endswith(".md"):
            unlink_left_out(root, out, rel)
    return copied + ["README.md"]


def unlink_left_out(root: Path, out: Path, rel: str) -> None:
    """Rewrites the links of the copied markdown file rel whose target is in the course but not
    in the template (docs/instructors.md, a measurement log) as their text and LEFT_OUT, so no
    link of the template leads nowhere. A link that is broken in the course stays as it is."""
    path = out / rel

    def replace(match: re.Match) -> str:
        if match.group(1) or match.group(2):  # a code span, or an image
            return match.group(0)
        text, target = match.group(3), match.group(4)
        if re.match(r"[a-z][a-z0-9+.-]*:|#", target, re.I):  # a URL, or a place on this page
            return match.group(0)
        file = target.split("#", 1)[0]
        there = (root / rel).parent / file
        here = path.parent / file
        if here.exists() or not there.exists():
            return match.group(0)
        return f"{text}{LEFT_OUT}"

    text = path.read_text(encoding="utf-8")
    # Fenced code blocks hold no links: only the text between them is rewritten.
    parts = re.split(r"(^```.*?^```[^\n]*$)", text, flags=re.M | re.S)
    rewritten = "".join(part if part.startswith("```") else _LINK.sub(replace, part)
                        for part in parts)
    if rewritten != text:
        path.write_text(rewritten, encoding="utf-8")


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

