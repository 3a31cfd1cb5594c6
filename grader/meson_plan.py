"""Prints the build plan for meson.build, one record a line, fields separated by '|', lists by
','; paths relative to the course root:

shared|<chapter>/<shared>|folder|course sources|libraries|ceilings source
    one per folder of shared course code, before the exercises that use it; its sources are
    compiled once per build; libraries is the union of its exercises' libraries; the ceilings
    source (<shared>_ceilings.cpp, or empty) makes the program <chapter>_<shared>_ceilings.
exercise|name|chapter|exercise dir|student files|course sources|libraries|rdc|manifest|
        shared key|test sources|bench sources|hidden test sources
    one per exercise; shared key is <chapter>/<shared> or empty; hidden test sources are
    added to the test binary only with -Dhidden_tests=true (grader/hidden.py).

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


def main(root: str) -> int:
    try:
        exercises = discover(Path(root))
    except GraderError as error:
        print(error, file=sys.stderr)
        return 1
    base = Path(root).resolve()

    def rel(path: Path) -> str:
        return str(path.resolve().relative_to(base))

    # key -> [folder, sources, libraries in first-use order, ceilings source]
    shared: dict[str, list] = {}
    for ex in exercises:
        if ex.shared:
            ceilings = ceilings_source(ex)
            entry = shared.setdefault(f"{ex.chapter}/{ex.shared}",
                                      [rel(ex.shared_directory), shared_sources(ex), [],
                                       ceilings.name if ceilings else ""])
            entry[2] += [lib for lib in ex.libraries if lib not in entry[2]]
    for key, (folder, sources, libraries, ceilings) in shared.items():
        print("|".join(["shared", key, folder, ",".join(sources), ",".join(libraries),
                        ceilings]))
    for ex in exercises:
        print("|".join(["exercise", ex.name, ex.chapter, rel(ex.directory), ",".join(ex.files),
                        ",".join(course_sources(ex)), ",".join(ex.libraries),
                        "1" if ex.rdc else "0", str(ex.manifest),
                        f"{ex.chapter}/{ex.shared}" if ex.shared else "",
                        ",".join(rel(p) for p in test_sources(ex)),
                        ",".join(rel(p) for p in bench_sources(ex)),
                        _hidden_test_source(ex, rel)]))
    return 0


def _hidden_test_source(ex, rel) -> str:
    path = ex.directory / f"{ex.name}{HIDDEN_TEST_SUFFIX}"
    return rel(path) if path.is_file() else ""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
