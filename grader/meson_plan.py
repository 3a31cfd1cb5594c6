"""Prints the exercise list for meson.build, one line per exercise:
name|chapter|exercise dir|student files|course sources|libraries|rdc|manifest
Run by Meson at configure time; errors go to stderr with exit status 1."""

import sys
from pathlib import Path

if sys.version_info < (3, 11):
    sys.exit("the course needs Python 3.11 or newer (tomllib)")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.errors import GraderError  # noqa: E402
from grader.manifest import course_sources, discover  # noqa: E402


def main(root: str) -> int:
    try:
        exercises = discover(Path(root))
    except GraderError as error:
        print(error, file=sys.stderr)
        return 1
    for ex in exercises:
        rel = ex.directory.relative_to(Path(root).resolve() if ex.directory.is_absolute() else root)
        print("|".join([ex.name, ex.chapter, str(rel), ",".join(ex.files),
                        ",".join(course_sources(ex)), ",".join(ex.libraries),
                        "1" if ex.rdc else "0", str(ex.manifest)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
