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
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError

BEGIN = "// @begin-solution"
HINT = "// @hint:"
STUB = "// @skeleton:"
END = "// @end-solution"
SOURCE_SUFFIXES = {".cu", ".cuh", ".cpp", ".h", ".hpp"}


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
    problem: str  # stale | missing | extra


def generate(solutions: Path) -> dict[str, str]:
    """Relative path -> skeleton text for every source file under solutions/."""
    files = {}
    for path in sorted(solutions.rglob("*")):
        if path.is_file() and path.suffix in SOURCE_SUFFIXES:
            rel = path.relative_to(solutions).as_posix()
            files[rel] = to_skeleton(path.read_text(encoding="utf-8"), str(path))
    return files


def compare(solutions: Path, skeletons: Path) -> list[Difference]:
    wanted = generate(solutions)
    have = {p.relative_to(skeletons).as_posix(): p for p in sorted(skeletons.rglob("*"))
            if p.is_file() and p.suffix in SOURCE_SUFFIXES} if skeletons.is_dir() else {}
    differences = []
    for rel, text in wanted.items():
        if rel not in have:
            differences.append(Difference(rel, "missing"))
        elif have[rel].read_text(encoding="utf-8") != text:
            differences.append(Difference(rel, "stale"))
    differences += [Difference(rel, "extra") for rel in have if rel not in wanted]
    return differences


def write(solutions: Path, skeletons: Path) -> list[str]:
    written = []
    for rel, text in generate(solutions).items():
        target = skeletons / rel
        if target.is_file() and target.read_text(encoding="utf-8") == text:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(rel)
    return written
