"""The student's workspace: workspace/, a git-ignored copy of skeletons/ that only the student
writes. `python3 -m grader init` (and the first `grade` without a directory) copies in every
skeleton file the workspace lacks and never overwrites one that is there, so a course update
that adds exercises reaches the student without touching their work.
"""

from __future__ import annotations

import shutil
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
