#!/usr/bin/env python3
"""The files of a fixture submission (tests/fixtures/submissions/<name>/), patches applied.

A fixture's chapter folder holds, for each source file, either the file itself (plain: code
written for the fixture) or `<file>.patch`: a unified diff from a solution to the fixture's
file, so that the fixture follows the solution as it changes. The solution is the one its
first line names, `--- solutions/<chapter>/<source>`: usually the file's own, another file of
the chapter where the fixture hands in one exercise's solution as another's (rung 4 as rung
5). An empty patch is the file's own solution unchanged. Links are kept as links. The grader never
sees a patch: what it grades is the fixture materialised (`submission`).

A patch applies strictly: each hunk's context and removed lines must match the solution exactly
(a hunk may have moved, as when the solution gained lines above it, but no line may differ),
else FixtureError names the fixture, the file, the hunk and the line. CI applies every patch
(tests/test_fixture_files.py), so a solution change that a fixture no longer fits fails there.

Standard library only: tests import it, and scripts put tests/ on sys.path to import it.

    files(fixture) -> {relative path: bytes | Link}  the submission's files (no expect.toml)
    materialise(fixture, into) -> into     writes them there (only what changed)
    overlaid(fixture, into) -> into | None  the same over every solution's files: the whole
                                           course's set of files, whatever the fixture
    submission(fixture, scratch=None)      the folder to grade: the fixture itself when it holds
                                           no patch, else its copy in scratch/<name>
                                           (default build/fixtures/<name>)
    make_patch(solution, text, path), apply_patch(solution, patch, where, path)
    write_back(name, edited) -> [lines]    the fixture made from an edited copy (`diff`)
    check() -> [problems]                  every fixture materialised, what failed

Command line (python3 tests/fixture_files.py ...):
    materialise NAME [INTO]   a copy to edit (default build/fixture-edit/NAME); where a patch no
                              longer applies, the solution and the patch as <file>.rej
    diff NAME [EDITED]        writes the fixture's files and patches from the edited copy
                              (default build/fixture-edit/NAME); a new NAME makes a new fixture
    check                     applies every fixture's patches; exit status 1 if one fails
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "submissions"
SOLUTIONS = ROOT / "solutions"
SCRATCH = ROOT / "build" / "fixtures"  # what tests and scripts grade
EDIT = ROOT / "build" / "fixture-edit"  # where the command line materialises, to edit
PATCH = ".patch"
EXPECT = "expect.toml"
NO_NEWLINE = "\\ No newline at end of file\n"
_CHAPTER = re.compile(r"ch\d\d_\w+$")
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class FixtureError(Exception):
    """A fixture that cannot be materialised: a patch that does not apply, or is malformed."""


@dataclasses.dataclass(frozen=True)
class Link:
    target: str  # where the link leads, as an absolute path


def _lines(text: str) -> list[str]:
    """Lines with their '\\n' (only '\\n' ends a line, unlike str.splitlines)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def make_patch(solution: str, text: str, path: str, source: str | None = None) -> str:
    """The unified diff (3 lines of context) from solutions/<source> (default: <path>) to the
    fixture's <path>; empty when they are the same."""
    out = []
    for line in difflib.unified_diff(_lines(solution), _lines(text),
                                     f"solutions/{source or path}", path):
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return "".join(out)


_SOURCE = re.compile(r"--- solutions/([\w.-]+/[\w.-]+)\n")


def patch_source(patch: str, path: str) -> str:
    """The solution a patch applies to (relative to solutions/): the one its first line names,
    or <path> itself for an empty or headless patch (which _hunks then refuses)."""
    match = _SOURCE.fullmatch(_lines(patch)[0]) if patch else None
    return match.group(1) if match else path


def _hunks(patch: str, where: str, path: str) -> list[tuple[str, int, int, list[str], list[str]]]:
    """(header, old start, new start, old lines, new lines) of each hunk, checked."""
    lines = _lines(patch)
    if not lines:
        return []
    source = patch_source(patch, path)
    if len(lines) < 2 or lines[0] != f"--- solutions/{source}\n" or lines[1] != f"+++ {path}\n":
        raise FixtureError(f"{where}: a patch starts '--- solutions/{path}' (or another "
                           f"solution of the chapter) then '+++ {path}'")
    hunks, i = [], 2
    while i < len(lines):
        match = _HUNK.match(lines[i])
        if not match:
            raise FixtureError(f"{where}: line {i + 1} should start a hunk (@@ -a,b +c,d @@): "
                               f"{lines[i].rstrip()!r}")
        header = match.group(0)
        a, b, c, d = (int(g) if g is not None else 1 for g in match.groups())
        old, new, i = [], [], i + 1
        while i < len(lines) and (len(old) < b or len(new) < d):
            tag, body = lines[i][:1], lines[i][1:]
            if tag not in (" ", "-", "+") or not body.endswith("\n"):
                raise FixtureError(f"{where}: hunk {len(hunks) + 1} ({header}): line {i + 1} "
                                   f"is not ' ', '-' or '+' and a line: {lines[i].rstrip()!r}")
            if i + 1 < len(lines) and lines[i + 1] == NO_NEWLINE:
                body, i = body[:-1], i + 1
            if tag in " -":
                old.append(body)
            if tag in " +":
                new.append(body)
            i += 1
        if (len(old), len(new)) != (b, d):
            raise FixtureError(f"{where}: hunk {len(hunks) + 1} ({header}) holds {len(old)} old "
                               f"and {len(new)} new lines, its header says {b} and {d}")
        hunks.append((header, a - 1 if b else a, c - 1 if d else c, old, new))
    return hunks


def apply_patch(solution: str, patch: str, where: str, path: str) -> str:
    """The solution with the patch applied; FixtureError unless every hunk's context and
    removed lines are found in it exactly, in order (a hunk is looked for nearest its line)."""
    original = _lines(solution)
    source = patch_source(patch, path)
    out: list[str] = []
    done = shift = 0  # the original's lines before `done` are consumed; the last hunk's move
    for k, (header, start, _, old, new) in enumerate(_hunks(patch, where, path), 1):
        fits = [p for p in range(done, len(original) - len(old) + 1)
                if original[p:p + len(old)] == old]
        if not fits:
            at = min(max(start + shift, done), len(original))
            got = original[at:at + len(old)]
            first = next((j for j in range(len(old)) if j >= len(got) or got[j] != old[j]), 0)
            found = repr(got[first].rstrip("\n")) if first < len(got) else "the end of the file"
            raise FixtureError(
                f"{where}: hunk {k} ({header}) does not apply to solutions/{source}: line "
                f"{at + first + 1} there is {found}, the patch expects "
                f"{old[first].rstrip(chr(10))!r} (and no other place fits); the solution "
                f"changed: make the fixture again (tests/fixtures/submissions/README.md)")
        p = min(fits, key=lambda q: (abs(q - start - shift), q))
        out += original[done:p] + new
        done, shift = p + len(old), p - start
    return "".join(out + original[done:])


def files(fixture: Path, solutions: Path = SOLUTIONS,
          keep_going: bool = False) -> dict[str, bytes | Link]:
    """The fixture's submission: every file under its chapter folders (relative path ->
    content, or a Link), each patch replaced by the patched solution. A patch that does not
    apply raises FixtureError; with keep_going, the solution stands in for its file and the
    patch is kept beside it as <file>.rej, to port by hand."""
    fixture = Path(fixture)
    out: dict[str, bytes | Link] = {}
    for folder, dirs, names in os.walk(fixture):
        dirs.sort()
        for name in sorted(names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
            path = Path(folder) / name
            rel = path.relative_to(fixture).as_posix()
            if rel == EXPECT:
                continue
            if path.is_symlink():
                out[rel] = Link(os.path.normpath(os.path.join(folder, os.readlink(path))))
            elif rel.endswith(PATCH):
                target = rel[:-len(PATCH)]
                where = f"fixture {fixture.name}: {rel}"
                if (fixture / target).exists() or (fixture / target).is_symlink():
                    raise FixtureError(f"{where}: {target} is there too; keep one of them")
                patch = path.read_bytes().decode()
                source = patch_source(patch, target)
                if source != target and source.split("/")[0] != target.split("/")[0]:
                    raise FixtureError(f"{where}: solutions/{source} is another chapter's")
                solution = solutions / source
                if not solution.is_file():
                    raise FixtureError(f"{where}: no solutions/{source} to apply it to")
                try:
                    out[target] = apply_patch(solution.read_bytes().decode(), patch, where,
                                              target).encode()
                except FixtureError as error:
                    if not keep_going:
                        raise
                    print(f"fixture_files: {error}", file=sys.stderr)
                    out[target], out[target + ".rej"] = solution.read_bytes(), path.read_bytes()
            else:
                out[rel] = path.read_bytes()
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
    return out


def has_patches(fixture: Path) -> bool:
    return any(p.name.endswith(PATCH) for p in Path(fixture).rglob("*") if p.is_file())


def materialise(fixture: Path, into: Path, solutions: Path = SOLUTIONS,
                keep_going: bool = False) -> Path:
    """Writes the fixture's submission into the folder `into` (made if needed): files whose
    content is already there are left alone (their times too, so a build stays incremental),
    what the fixture does not hold is removed. Nothing is written when a patch fails, or when
    `into` holds anything but chapter folders (it is not a fixture's copy)."""
    return _sync(files(fixture, solutions, keep_going), Path(into))


def overlaid(fixture: Path, into: Path, solutions: Path = SOLUTIONS) -> Path | None:
    """The fixture's files over every solution's, written into `into` as materialise does: a
    submission that holds the whole course's files whatever the fixture, so one build folder
    grades fixture after fixture without configuring again (build.configure_key hashes which
    files there are, not what they hold) and compiles only what differs from the last one.
    None for a fixture that must be graded where it is: one with a link, or a source that
    names '../' (it reaches outside its folder on purpose)."""
    own = files(fixture, solutions)
    if any(isinstance(c, Link) or b"../" in c for c in own.values()):
        return None
    wanted = {p.relative_to(solutions).as_posix(): p.read_bytes()
              for p in sorted(Path(solutions).glob("ch*/**/*")) if p.is_file()}
    return _sync({**wanted, **own}, Path(into))


def _sync(wanted: dict[str, bytes | Link], into: Path) -> Path:
    if into.exists():
        _only_chapters(into, "give a new folder, or a copy of a fixture, to replace")
    into.mkdir(parents=True, exist_ok=True)
    for folder, dirs, names in os.walk(into, topdown=False):
        for name in names + dirs:
            path = Path(folder) / name
            rel = path.relative_to(into).as_posix()
            if path.is_symlink() or path.is_file():
                if rel not in wanted:
                    path.unlink()
            elif not any(w.startswith(rel + "/") for w in wanted):
                path.rmdir()
    for rel, content in wanted.items():
        path = into / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            if path.is_symlink() and os.readlink(path) == content.target:
                continue
            if path.is_symlink() or path.exists():
                path.unlink()
            path.symlink_to(content.target)
        elif path.is_symlink() or not path.is_file() or path.read_bytes() != content:
            if path.is_symlink():
                path.unlink()
            _write(path, content)
    return into


def _only_chapters(folder: Path, hint: str) -> None:
    other = sorted(p.name for p in folder.iterdir()
                   if not (_CHAPTER.match(p.name) and p.is_dir() and not p.is_symlink()))
    if other:
        raise FixtureError(f"{folder} holds more than chapter folders ({', '.join(other[:3])}): "
                           f"{hint}")


def submission(fixture: Path, scratch: Path | None = None, solutions: Path = SOLUTIONS) -> Path:
    """The folder to grade: the fixture's own when it holds no patch (graded in place, as a
    source including '../../..' expects), else its copy materialised in scratch/<name>."""
    fixture = Path(fixture)
    if not has_patches(fixture):
        return fixture
    return materialise(fixture, Path(scratch or SCRATCH) / fixture.name, solutions)


def _write(path: Path, content: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def write_back(name: str, edited: Path, fixtures: Path = FIXTURES,
               solutions: Path = SOLUTIONS) -> list[str]:
    """Makes tests/fixtures/submissions/<name>/ hold the edited copy's files: each as a patch
    from the solution of its chapter that gives the smallest one (its own first, on a tie),
    when that patch is smaller than the file, else as it is. Files and patches the copy no longer has are removed, expect.toml is
    kept, and links the fixture has are kept (new ones are made). Returns what it changed."""
    edited, fixture = Path(edited), Path(fixtures) / name
    if not re.fullmatch(r"[\w.-]+", name) or name.startswith("."):
        raise FixtureError(f"{name!r} is not a fixture's name")
    if not edited.is_dir():
        raise FixtureError(f"{edited} is not a folder")
    _only_chapters(edited, "a fixture's copy holds its chapter folders only")
    keep: set[str] = {EXPECT}
    said = []

    def put(rel: str, content: bytes) -> None:
        keep.add(rel)
        path = fixture / rel
        if path.is_symlink() or not path.is_file() or path.read_bytes() != content:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write(path, content)
            said.append(f"wrote {name}/{rel}")

    for rel, content in files(edited, solutions).items():
        if rel.endswith((".rej", ".orig")):
            continue
        if isinstance(content, Link):
            keep.add(rel)
            if not (fixture / rel).is_symlink():
                (fixture / rel).parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.path.relpath(content.target, (fixture / rel).parent), fixture / rel)
                said.append(f"linked {name}/{rel}")
            continue
        chapter = (solutions / rel).parent
        candidates = [solutions / rel] if (solutions / rel).is_file() else []
        if chapter.is_dir():
            candidates += sorted(p for p in chapter.iterdir()
                                 if p.is_file() and p.suffix in (".cu", ".cpp", ".h", ".cuh")
                                 and p != solutions / rel)
        patches = [make_patch(p.read_bytes().decode(), content.decode(), rel,
                              p.relative_to(solutions).as_posix()).encode() for p in candidates]
        smallest = min(patches, key=len, default=None)
        if smallest is not None and len(smallest) < len(content):
            put(rel + PATCH, smallest)
            continue
        put(rel, content)
    for path in sorted(fixture.rglob("*"), reverse=True):
        rel = path.relative_to(fixture).as_posix()
        if path.is_symlink() or path.is_file():
            if rel not in keep and not any(k.startswith(rel + "/") for k in keep):
                path.unlink()
                said.append(f"removed {name}/{rel}")
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    if not (fixture / EXPECT).is_file():
        said.append(f"{name}/{EXPECT} is missing: write it (tests/fixture_expect.py says how)")
    return said


def check(fixtures: Path = FIXTURES, solutions: Path = SOLUTIONS) -> list[str]:
    """What fails to materialise, one line per fixture (empty when every patch applies)."""
    problems = []
    for fixture in sorted(p.parent for p in Path(fixtures).glob(f"*/{EXPECT}")):
        try:
            files(fixture, solutions)
        except FixtureError as error:
            problems.append(str(error))
    return problems


def main(argv: list[str]) -> int:
    usage = __doc__[__doc__.index("Command line"):]
    if not argv or argv[0] not in ("materialise", "diff", "check") or \
            len(argv) > (1 if argv[0] == "check" else 3) or (argv[0] != "check" and len(argv) < 2):
        print(usage, file=sys.stderr)
        return 2
    if argv[0] == "check":
        problems = check()
        print("\n".join(problems) or "every fixture's patches apply")
        return 1 if problems else 0
    name = argv[1]
    copy = Path(argv[2]) if len(argv) > 2 else EDIT / name
    try:
        if argv[0] == "materialise":
            if not (FIXTURES / name).is_dir():
                raise FixtureError(f"no fixture {name} in {FIXTURES}")
            print(materialise(FIXTURES / name, copy, keep_going=True))
        else:
            print("\n".join(write_back(name, copy)) or f"{name}: nothing changed")
    except FixtureError as error:
        print(f"fixture_files: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
