"""The student's workspace: workspace/, a git-ignored copy of skeletons/ that only the student
writes. `python3 -m grader init` (and the first `grade` without a directory) copies in every
skeleton file the workspace lacks and never overwrites one that is there, so a course update
that adds exercises reaches the student without touching their work.
"""

from __future__ import annotations

import re
import shutil
from collections import deque
from pathlib import Path

from grader.errors import GraderError

WORKSPACE = "workspace"


def path(root: Path) -> Path:
    return Path(root) / WORKSPACE


def missing_files(root: Path) -> list[str]:
    """Skeleton files (relative paths) that the workspace does not have yet."""
    skeleton_dir = Path(root) / "skeletons"
    if not skeleton_dir.is_dir():
        raise GraderError(f"no skeletons/ folder under {root}: nothing to copy into the workspace")
    target = path(root)
    return [p.relative_to(skeleton_dir).as_posix() for p in sorted(skeleton_dir.rglob("*"))
            if p.is_file() and not p.name.startswith(".")
            and not (target / p.relative_to(skeleton_dir)).exists()]


def init(root: Path) -> list[str]:
    """Copies the skeleton files the workspace lacks; returns them. Existing files are kept
    as they are, whatever they hold."""
    skeleton_dir, target = Path(root) / "skeletons", path(root)
    if target.exists() and not target.is_dir():
        raise GraderError(f"{target} exists and is not a folder; move it away and run "
                          "'python3 -m grader init' again")
    copied = []
    for rel in missing_files(root):
        destination = target / rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            # "x" mode: never replace a file that appeared since missing_files looked.
            with open(skeleton_dir / rel, "rb") as src, open(destination, "xb") as dst:
                shutil.copyfileobj(src, dst)
        except FileExistsError:
            continue
        except OSError as error:
            raise GraderError(f"cannot write {destination}: {error.strerror}") from None
        copied.append(rel)
    return copied


# Extensions a student might give an exercise file by mistake (vector_add.cpp for .cu).
_SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp")
_LOOK_AT_MOST = 5000  # entries of a submission searched for near misses


def _squeezed(name: str) -> str:
    """A file name's stem without case or separators: VectorAdd.cu, vector-add.cpp and
    vector_add.cu all give "vectoradd"."""
    return re.sub(r"[^a-z0-9]", "", Path(name).stem.lower())


def near_misses_in(folder: Path, name: str) -> list[str]:
    """Files in `folder` named almost like the exercise file `name` (another case, other
    separators or extension), which the grader does not take: it names them instead."""
    if not folder.is_dir():
        return []
    want = _squeezed(name)
    return sorted(p.name for p in folder.iterdir()
                  if p.is_file() and p.name != name and p.suffix.lower() in _SOURCE_SUFFIXES
                  and _squeezed(p.name) == want)


def near_misses(submission: Path, wanted: dict[str, str]) -> list[tuple[str, str]]:
    """(found, expected) paths relative to `submission` for the files that look like an
    exercise file but are misnamed or misplaced (VectorAdd.cu, ch01/vector_add.cu, a loose
    vector_add.cpp). `wanted`: exercise file name -> its expected relative path."""
    by_stem = {_squeezed(name): expected for name, expected in wanted.items()}
    found = []
    for count, path in enumerate(_walk(submission)):
        if count >= _LOOK_AT_MOST:
            break
        expected = by_stem.get(_squeezed(path.name))
        if expected is None or path.suffix.lower() not in _SOURCE_SUFFIXES:
            continue
        rel = path.relative_to(submission).as_posix()
        if rel != expected:
            found.append((rel, expected))
    return sorted(found)


def _walk(top: Path):
    """Files under top, nearest first, skipping hidden folders and build output."""
    folders = deque([top])
    while folders:
        folder = folders.popleft()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir():
                if entry.name not in ("build", "node_modules", "__pycache__"):
                    folders.append(entry)
            elif entry.is_file():
                yield entry
