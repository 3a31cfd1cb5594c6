"""Prints the build plan for meson.build, one record a line: `kind=<kind>`, then each of the
kind's fields as `name=value`, separated by '|'; lists joined by ','; paths relative to the
course root. A name the plan cannot carry (holding '|', '=', a line break, or in a list ',')
stops it with an error. meson.build reads every record into a dictionary and takes its fields by name
(Meson's language has no JSON reader); the names are declared once, below.

kind=shared (SHARED_FIELDS): one per folder of shared course code, before the exercises that
    use it. key is <chapter>/<shared>; its sources are compiled once per build; libraries is
    the union of its exercises' libraries; ceilings (<shared>_ceilings.cpp, or empty) makes
    the program <chapter>_<shared>_ceilings.
kind=exercise (EXERCISE_FIELDS): one per exercise. shared is the key of its shared folder or
    empty; rdc is true or false; hidden_test_sources are added to the test binary only with
    -Dhidden_tests=true (grader/hidden.py).

Run by Meson at configure time; errors go to stderr with exit status 1."""

import sys
from pathlib import Path

if sys.version_info < (3, 11):
    sys.exit("the course needs Python 3.11 or newer (tomllib)")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.errors import GraderError  # noqa: E402
from grader.hidden import HIDDEN_TEST_SUFFIX  # noqa: E402
from grader.manifest import (bench_sources, ceilings_source, course_sources,  # noqa: E402
                             discover, shared_sources, test_sources)

SHARED_FIELDS = ("key", "folder", "sources", "libraries", "ceilings")
EXERCISE_FIELDS = ("name", "chapter", "folder", "student_files", "course_sources", "libraries",
                   "rdc", "manifest", "shared", "test_sources", "bench_sources",
                   "hidden_test_sources")
FIELDS = {"shared": SHARED_FIELDS, "exercise": EXERCISE_FIELDS}
SEPARATOR, NAME_SEPARATOR, LIST_SEPARATOR = "|", "=", ","


def record(kind: str, **values) -> str:
    """One line of the plan: every field of `kind` and no other; a list or tuple is joined by
    ','. GraderError for a name that would split a record, a field or a list."""
    if set(values) != set(FIELDS[kind]):
        raise ValueError(f"a {kind} record has the fields {FIELDS[kind]}, not {tuple(values)}")
    fields = [f"kind{NAME_SEPARATOR}{kind}"]
    for name in FIELDS[kind]:
        value = values[name]
        many = isinstance(value, (list, tuple))
        for item in map(str, value if many else [value]):
            if any(c in item for c in (SEPARATOR, NAME_SEPARATOR, "\n")) or \
                    (many and LIST_SEPARATOR in item):
                raise GraderError(f"{item!r} ({kind} {name}): the build plan cannot carry a "
                                  f"name holding '{SEPARATOR}', '{NAME_SEPARATOR}', "
                                  f"'{LIST_SEPARATOR}' or a line break; rename it")
        text = LIST_SEPARATOR.join(map(str, value)) if many else str(value)
        fields.append(f"{name}{NAME_SEPARATOR}{text}")
    return SEPARATOR.join(fields)


def parse(line: str) -> dict[str, str]:
    """A record read back as meson.build reads it: field name -> text (lists still joined)."""
    return dict(f.split(NAME_SEPARATOR) for f in line.split(SEPARATOR))


def main(root: str) -> int:
    try:
        exercises = discover(Path(root))
    except GraderError as error:
        print(error, file=sys.stderr)
        return 1
    base = Path(root).resolve()

    def rel(path: Path) -> str:
        return str(path.resolve().relative_to(base))

    # key -> the shared record's fields, libraries in first-use order
    shared: dict[str, dict] = {}
    for ex in exercises:
        if ex.shared:
            ceilings = ceilings_source(ex)
            entry = shared.setdefault(f"{ex.chapter}/{ex.shared}", {
                "folder": rel(ex.shared_directory), "sources": shared_sources(ex),
                "libraries": [], "ceilings": ceilings.name if ceilings else ""})
            entry["libraries"] += [lib for lib in ex.libraries if lib not in entry["libraries"]]
    try:
        lines = [record("shared", key=key, **fields) for key, fields in shared.items()]
        lines += [record("exercise", name=ex.name, chapter=ex.chapter, folder=rel(ex.directory),
                         student_files=list(ex.files), course_sources=course_sources(ex),
                         libraries=list(ex.libraries), rdc="true" if ex.rdc else "false",
                         manifest=rel(ex.manifest),
                         shared=f"{ex.chapter}/{ex.shared}" if ex.shared else "",
                         test_sources=[rel(p) for p in test_sources(ex)],
                         bench_sources=[rel(p) for p in bench_sources(ex)],
                         hidden_test_sources=_hidden_test_sources(ex, rel))
                  for ex in exercises]
    except GraderError as error:
        print(error, file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


def _hidden_test_sources(ex, rel) -> list[str]:
    path = ex.directory / f"{ex.name}{HIDDEN_TEST_SUFFIX}"
    return [rel(path)] if path.is_file() else []


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
