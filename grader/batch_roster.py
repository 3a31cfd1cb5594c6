"""A batch's roster: the students of a folder of student folders or of a CSV roster (a header
row, then student id,path), and whether a student's folder can be graded at all."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from grader import workspace
from grader.errors import GraderError
from grader.manifest import CHAPTER_PATTERN, Exercise

# Student ids name files; the first character keeps them from looking like options or
# hidden files.
STUDENT_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Student:
    id: str
    submission: Path
    where: str = ""  # the roster line, for messages


def read_roster(source: Path) -> list[Student]:
    """The students of a folder of student folders or of a CSV roster (student id, path;
    a header row). GraderError, one line, for anything a batch cannot start with."""
    if not source.exists():
        raise GraderError(f"roster {source} does not exist")
    students = _read_folder(source) if source.is_dir() else _read_csv(source)
    if not students:
        raise GraderError(f"roster {source} lists no students")
    return students


def _read_folder(folder: Path) -> list[Student]:
    chapters = [p.name for p in folder.iterdir() if p.is_dir() and CHAPTER_PATTERN.match(p.name)]
    if chapters:
        raise GraderError(f"{folder} looks like one submission (it has {sorted(chapters)[0]}/); "
                          "batch takes a folder of student folders, or a CSV roster")
    students = []
    for p in sorted(folder.iterdir()):
        if not p.is_dir() or p.name.startswith("."):
            continue
        if not STUDENT_ID.match(p.name):
            raise GraderError(f"student folder {p}: the name is the student id, so letters, "
                              "digits, '.', '_' and '-' only")
        students.append(Student(p.name, p, str(p)))
    _no_duplicates(students)
    return students


def _read_csv(path: Path) -> list[Student]:
    try:
        text = path.read_text(encoding="utf-8-sig")  # -sig: spreadsheets write a BOM
    except (OSError, UnicodeDecodeError) as error:
        raise GraderError(f"roster {path} cannot be read "
                          f"({getattr(error, 'strerror', None) or error})") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    students = []
    try:
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as error:
        raise GraderError(f"roster {path} line {reader.line_num}: malformed CSV ({error})") \
            from None
    rows = [(n, [c.strip() for c in row]) for n, row in rows if any(c.strip() for c in row)]
    if not rows:
        raise GraderError(f"roster {path} is empty; it needs a header row (student,path) "
                          "and one row per student")
    (first, header), body = rows[0], rows[1:]
    if len(header) >= 2 and header[1] and (path.parent / header[1]).is_dir():
        raise GraderError(f"roster {path} line {first}: a student where the header row "
                          "belongs; start the file with a header such as student,path")
    for line, row in body:
        where = f"roster {path} line {line}"
        if len(row) < 2 or not row[0] or not row[1]:
            raise GraderError(f"{where}: expected a student id and a path, found "
                              f"{','.join(row)!r}")
        if not STUDENT_ID.match(row[0]):
            raise GraderError(f"{where}: student id {row[0]!r} may hold letters, digits, "
                              "'.', '_' and '-' only (it names the student's files)")
        students.append(Student(row[0], path.parent / row[1], where))
    _no_duplicates(students)
    return students


def _no_duplicates(students: list[Student]) -> None:
    # Case-insensitively: on some file systems Alice.json and alice.json are one file.
    seen: dict[str, Student] = {}
    for s in students:
        other = seen.get(s.id.lower())
        if other is not None:
            raise GraderError(f"{s.where}: duplicate student id {s.id!r} (also {other.where})")
        seen[s.id.lower()] = s



def submission_problem(student: Student, exercises: list[Exercise]) -> str:
    """Why the student's folder cannot be graded at all, or "" (a batch records it as the
    student's failure; a Slurm submission too, before it submits)."""
    folder = student.submission
    if not folder.exists():
        return f"submission folder {folder} does not exist"
    if not folder.is_dir():
        return f"submission {folder} is not a folder"
    if not any((folder / ex.chapter / f).is_file() for ex in exercises for f in ex.files):
        example = exercises[0]
        # Files named or placed almost right (VectorAdd.cu, a loose vector_add.cu, a folder
        # too deep), as `grade` names them; a name that is not UTF-8 with its bad bytes
        # replaced, since the gradebook and the log are UTF-8.
        wanted = {f: f"{ex.chapter}/{f}" for ex in exercises for f in ex.files}
        near = [f"{found.encode('utf-8', 'surrogateescape').decode('utf-8', 'replace')} "
                f"(should be {expected})"
                for found, expected in workspace.near_misses(folder, wanted)]
        return (f"no exercise files in {folder} (expected one folder per chapter, e.g. "
                f"{example.chapter}/{example.files[0]})"
                + (f"; found {', '.join(near[:3])}" if near else "")
                + (f" and {len(near) - 3} more like them" if len(near) > 3 else ""))
    return ""
