"""Skeletons are generated from the solutions, so the two cannot drift apart.

In a solution file, a block

    // @begin-solution: first line of the hint the student sees
    // @hint: further hint lines
    ...reference code...
    // @skeleton: code the skeleton keeps instead (optional, repeatable)
    // @end-solution

becomes, in the skeleton, the hint as "// TODO: ..." comments followed by the @skeleton lines,
at the block's indentation. Everything outside blocks is copied as it is. `python3 -m grader
skeletons --check` fails when the committed skeletons/ differ from what this produces.

skeletons/.generated records a SHA-256 of every file as last generated. Regenerating replaces
a skeleton only while it still has that hash (or none is recorded and it already matches):
a skeleton someone edited by hand is refused, and so never silently lost, unless --force.
Students never edit skeletons/: they work in workspace/ (grader/workspace.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError

BEGIN = "// @begin-solution"
HINT = "// @hint:"
STUB = "// @skeleton:"
END = "// @end-solution"
SOURCE_SUFFIXES = {".cu", ".cuh", ".cpp", ".h", ".hpp"}
RECORD = ".generated"


def to_skeleton(text: str, name: str = "<text>") -> str:
    out: list[str] = []
    block_start = None
    indent = ""
    hints: list[str] = []
    stubs: list[str] = []
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            if block_start is not None:
                raise GraderError(f"{name}:{number}: @begin-solution inside the block "
                                  f"opened at line {block_start}")
            block_start = number
            indent = line[: len(line) - len(line.lstrip())]
            rest = stripped[len(BEGIN):].lstrip()
            hints = [rest[1:].strip()] if rest.startswith(":") and rest[1:].strip() else []
            stubs = []
            continue
        if block_start is None:
            if stripped.startswith((HINT, STUB, END)):
                raise GraderError(f"{name}:{number}: {stripped.split()[1]} outside a "
                                  "@begin-solution block")
            out.append(line)
            continue
        if stripped.startswith(HINT):
            hints.append(stripped[len(HINT):].strip())
        elif stripped.startswith(STUB):
            stubs.append(stripped[len(STUB):].strip())
        elif stripped.startswith(END):
            for i, hint in enumerate(hints):
                out.append(f"{indent}// {'TODO: ' if i == 0 else '      '}{hint}\n")
            out.extend(f"{indent}{stub}\n" for stub in stubs)
            block_start = None
    if block_start is not None:
        raise GraderError(f"{name}:{block_start}: @begin-solution is never closed")
    return "".join(out)


@dataclass
class Difference:
    path: str
    problem: str  # stale | missing | extra | unrecorded


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_record(skeletons: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of the text last generated for it."""
    record = {}
    try:
        lines = (skeletons / RECORD).read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, UnicodeDecodeError):
        return record
    for line in lines:
        digest, _, rel = line.partition("  ")
        if len(digest) == 64 and rel:
            record[rel] = digest
    return record


def _write_record(skeletons: Path, files: dict[str, str]) -> None:
    text = "".join(f"{_sha(body)}  {rel}\n" for rel, body in sorted(files.items()))
    (skeletons / RECORD).write_text(text, encoding="utf-8")


def generate(solutions: Path) -> dict[str, str]:
    """Relative path -> skeleton text for every source file under solutions/."""
    files = {}
    for path in sorted(solutions.rglob("*")):
        if path.is_file() and path.suffix in SOURCE_SUFFIXES:
            rel = path.relative_to(solutions).as_posix()
            files[rel] = to_skeleton(path.read_text(encoding="utf-8"), str(path))
    return files


def _existing(skeletons: Path) -> dict[str, Path]:
    if not skeletons.is_dir():
        return {}
    return {p.relative_to(skeletons).as_posix(): p for p in sorted(skeletons.rglob("*"))
            if p.is_file() and p.suffix in SOURCE_SUFFIXES}


def compare(solutions: Path, skeletons: Path) -> list[Difference]:
    wanted = generate(solutions)
    have = _existing(skeletons)
    record = read_record(skeletons)
    differences = []
    for rel, text in wanted.items():
        if rel not in have:
            differences.append(Difference(rel, "missing"))
        elif have[rel].read_text(encoding="utf-8") != text:
            differences.append(Difference(rel, "stale"))
        elif record.get(rel) != _sha(text):
            differences.append(Difference(rel, "unrecorded"))
    differences += [Difference(rel, "extra") for rel in have if rel not in wanted]
    return differences


def hand_edited(solutions: Path, skeletons: Path) -> list[str]:
    """Skeletons that regenerating would change and that are not what was last generated."""
    wanted = generate(solutions)
    record = read_record(skeletons)
    edited = []
    for rel, path in _existing(skeletons).items():
        if rel not in wanted:
            continue
        current = path.read_text(encoding="utf-8", errors="replace")
        if current != wanted[rel] and record.get(rel) != _sha(current):
            edited.append(rel)
    return edited


def write(solutions: Path, skeletons: Path, force: bool = False) -> list[str]:
    """Regenerates skeletons/; returns the files written. Refuses (GraderError, nothing
    written) when a skeleton it would change was edited by hand, unless force."""
    edited = [] if force else hand_edited(solutions, skeletons)
    if edited:
        shown = ", ".join(f"skeletons/{rel}" for rel in edited[:3])
        more = f" and {len(edited) - 3} more" if len(edited) > 3 else ""
        raise GraderError(f"{shown}{more} changed since they were generated; regenerating "
                          "would lose that. Put the change into solutions/ (students work in "
                          "workspace/), or rerun with --force to replace them")
    files = generate(solutions)
    written = []
    for rel, text in files.items():
        target = skeletons / rel
        if target.is_file() and target.read_text(encoding="utf-8", errors="replace") == text:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(rel)
    skeletons.mkdir(parents=True, exist_ok=True)
    _write_record(skeletons, files)
    return written
