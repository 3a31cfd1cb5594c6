"""Before anything compiles: the student's sources may name only their own files, the course's
headers and system headers. A compiler reads whatever file a directive names and quotes it in
its errors, so an unchecked `#include` would show a student the reference solutions, the
hidden tests, another student's work or any file of the grading machine.

check() scans the preprocessor directives of the student's files, of the files of the
submission they include, and of every file in the chapter folder that could stand in for a
system header (the folder is on the include path of every exercise of the chapter, ahead of the
C++ library's headers, so a course header's `#include <vector>` reaches a file named `vector`
there). The scan is lexical, as the preprocessor sees the text: lines spliced, comments and
literals (raw strings too) skipped, `#` or `%:` first on a line. What macros build (token
pasting, a `_Pragma` of a stringized argument) it cannot see: the sandboxed compile covers that.

filter_compiler_output() is the second line: it withholds a compiler diagnostic located in a
file outside the submission and the course's headers, with the source lines quoted under it.
"""

from __future__ import annotations

import bisect
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.manifest import Exercise
from grader.model import BuildDetails, StageName, StageResult, StageStatus
from grader.stages.common import GradeOptions

# Course files a student may include: headers only. The exercise folder also holds the course's
# baselines, references and hidden tests (.cu, .cpp), which are not the student's to see.
COURSE_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh")
# Names a system header can have (<vector>, <cuda/std/atomic>, <cub/cub.cuh>, libstdc++'s
# bits/*.tcc); anything else not found in the submission or the course is refused, since the
# build directory, also on the include path, fills with objects, logs and programs as it builds.
SYSTEM_HEADER_SUFFIXES = COURSE_HEADER_SUFFIXES + (".inl", ".tcc", ".ipp", ".tpp", ".def", ".inc")
# The C++ library's headers without a suffix and without a folder. Any other such name could be
# a program the build has just linked into the build directory (vector_add_test).
STANDARD_HEADERS = frozenset("""
algorithm any array atomic barrier bit bitset cassert ccomplex cctype cerrno cfenv cfloat charconv
chrono cinttypes ciso646 climits clocale cmath codecvt compare complex concepts condition_variable
coroutine csetjmp csignal cstdalign cstdarg cstdbool cstddef cstdint cstdio cstdlib cstring ctgmath
ctime cuchar cwchar cwctype deque exception execution expected filesystem flat_map flat_set format
forward_list fstream functional future generator initializer_list iomanip ios iosfwd iostream
istream iterator latch limits list locale map mdspan memory memory_resource mutex new numbers
numeric optional ostream print queue random ranges ratio regex scoped_allocator semaphore set
shared_mutex source_location span spanstream sstream stack stacktrace stdexcept stdfloat
stop_token streambuf string string_view strstream syncstream system_error thread tuple
type_traits typeindex typeinfo unordered_map unordered_set utility valarray variant vector
version""".split())

# Files of the chapter folder that could stand in for a system header (same suffixes, or none).
_SHADOW_SUFFIXES = frozenset(("",) + SYSTEM_HEADER_SUFFIXES)
MAX_FILE_BYTES = 4 * 1024 * 1024   # a course source is a few KiB; beyond this, not scanned
MAX_TOTAL_BYTES = 16 * 1024 * 1024  # scanned for one exercise (about a second per MiB)
MAX_FOLDER_ENTRIES = 5000          # of the chapter folder, walked for links and stand-ins
MAX_FINDINGS = 50

WITHHELD = "[diagnostic in a file outside the submission withheld]"


@dataclass(frozen=True)
class Finding:
    file: str        # the student's file, relative to the chapter folder
    line: int        # 0 where the finding is about the file itself (a link)
    directive: str   # as written, shortened; "" for a file's own finding
    why: str

    def sentence(self) -> str:
        where = f"{self.file}:{self.line}: {self.directive}" if self.line else self.file
        return f"{where} {self.why}."

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "directive": self.directive,
                "why": self.why}


# --- the lexical scan -------------------------------------------------------------------------

@dataclass(frozen=True)
class Reference:
    """A file named by a directive: #include, #include_next, #import, #embed, __has_include,
    __has_include_next, __has_embed, #pragma GCC dependency."""
    line: int
    spelled: str
    name: str
    angled: bool
    next: bool = False   # include_next: the search goes on past the includer's own folder


@dataclass(frozen=True)
class Refusal:
    line: int
    spelled: str
    why: str


_INCLUDES = {"include", "include_next", "import", "embed"}
_HAS_INCLUDE = {"__has_include", "__has_include_next", "__has_embed"}
_ASM = {"asm", "__asm", "__asm__"}
# Attributes whose string GCC writes into the assembler's input unchecked: a newline in it
# starts an assembler directive of the student's (.incbin "/etc/shadow"), as tried with gcc 12.
_ASSEMBLER_ATTRIBUTES = {"section", "__section__", "weakref", "__weakref__", "symver",
                         "__symver__"}
_IFDEFS = {"ifdef", "ifndef", "elifdef", "elifndef"}
_NOTABLE = _HAS_INCLUDE | _ASM | _ASSEMBLER_ATTRIBUTES | {"_Pragma"}

_ID_CHAR = r"0-9A-Za-z_$\x80-\U0010ffff"  # GCC takes $ and any non-ASCII into identifiers
_TOKEN = re.compile(rf"""
    (?P<nl>\n)
  | (?P<ws>[ \t\f\v\x00-\x08\x0e-\x1f\x7f]+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?(?:\*/|\Z))
  | (?P<string>"(?:[^"\\\n]|\\[^\n])*"?)
  | (?P<char>'(?:[^'\\\n]|\\[^\n])*'?)
  | (?P<number>\.?[0-9](?:[eEpP][+-]|'[{_ID_CHAR}]|[{_ID_CHAR}.])*)
  | (?P<id>[A-Za-z_$\x80-\U0010ffff][{_ID_CHAR}]*)
  | (?P<paste>\#\#|%:%:)
  | (?P<hash>\#|%:)
  | (?P<other>.)
""", re.X | re.S)
# A raw string's opening: prefix, delimiter (at most 16 characters, none of space ( ) \ or
# controls; GCC also refuses others, and then this scan reads an ordinary string, which hides
# less), and the parenthesis.
_RAW_OPENING = re.compile(r'(?:u8|[uUL])?R"([!#-\'*-\[\]-~]{0,16})\(')
_CLOSED = re.compile(r'"(?:[^"\\\n]|\\[^\n])*"|\'(?:[^\'\\\n]|\\[^\n])*\'')
_UD_SUFFIX = re.compile(rf"[A-Za-z_$\x80-\U0010ffff][{_ID_CHAR}]*")
_SPLICE = re.compile(r"\\[ \t\f\v\x00]*\n")  # GCC also splices a backslash, spaces, newline
_SPACE = re.compile(r"(?:[ \t\f\v\x00-\x08\x0e-\x1f\x7f]+|/\*.*?(?:\*/|\Z)|//[^\n]*)*", re.S)
_SPACE_LINES = re.compile(r"(?:[ \t\f\v\n\x00-\x08\x0e-\x1f\x7f]+|/\*.*?(?:\*/|\Z)|//[^\n]*)*",
                          re.S)
_HEADER_NAME = re.compile(r'"([^"\n]*)"|<([^>\n]*)>')


class _Source:
    """The text as the preprocessor's later phases see it (lines spliced), with the way back to
    the written text: raw strings undo the splicing, and findings name the written line."""

    def __init__(self, text: str):
        # Lone carriage returns end lines for GCC too (tried: "\r#include" includes).
        self.text = text.replace("\r\n", "\n").replace("\r", "\n")
        if self.text.startswith("\ufeff"):
            self.text = " " + self.text[1:]
        pieces, self.at, self.removed = [], [], []
        last, total = 0, 0
        for m in _SPLICE.finditer(self.text):
            pieces.append(self.text[last:m.start()])
            total += m.end() - m.start()
            self.at.append(m.start() - (total - (m.end() - m.start())))
            self.removed.append(total)
            last = m.end()
        pieces.append(self.text[last:])
        self.spliced = "".join(pieces)
        self.written_ends = [m.end() for m in _SPLICE.finditer(self.text)]
        self.newlines = [m.start() for m in re.finditer("\n", self.text)]

    def written(self, pos: int) -> int:
        """The written offset of the spliced text's character `pos`."""
        i = bisect.bisect_right(self.at, pos)
        return pos + (self.removed[i - 1] if i else 0)

    def spliced_pos(self, written: int) -> int:
        """The spliced offset of written offset `written` (not inside a splice)."""
        i = bisect.bisect_right(self.written_ends, written)
        return written - (self.removed[i - 1] if i else 0)

    def line(self, pos: int) -> int:
        return bisect.bisect_left(self.newlines, self.written(pos)) + 1


def _shown(text: str, limit: int = 120) -> str:
    """The student's text, fit for a message: one line, no control characters, not long."""
    text = " ".join(text.split())
    # A byte of a file name that is not UTF-8 (os.fsdecode's U+DC80..U+DCFF) as that byte.
    text = "".join(c if c.isprintable() else
                   f"\\x{ord(c) - 0xdc00 if 0xdc80 <= ord(c) <= 0xdcff else ord(c):02x}"
                   for c in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Scanner:
    def __init__(self, text: str):
        self.src = _Source(text)
        self.s = self.src.spliced
        self.pos = 0
        self.references: list[Reference] = []
        self.refusals: list[Refusal] = []

    # The tokens, one at a time: (kind, text, start); comments and spaces skipped.
    def token(self, across_lines: bool = True) -> tuple[str, str, int]:
        s = self.s
        while self.pos < len(s):
            start = self.pos
            if s[start] in "uULR":
                raw = self._raw_string(start)
                if raw is not None:
                    self.pos = raw
                    return "string", s[start:raw], start
            m = _TOKEN.match(s, start)
            kind = m.lastgroup
            self.pos = m.end()
            if kind in ("ws", "line_comment", "block_comment"):
                continue
            if kind == "nl" and not across_lines:
                self.pos = start
                return "end", "", start
            if kind in ("string", "char") and _CLOSED.fullmatch(m.group()):
                suffix = _UD_SUFFIX.match(s, self.pos)  # "abc"R is one token, not R"...
                if suffix:
                    self.pos = suffix.end()
            return kind, s[start:self.pos], start
        return "end", "", len(s)

    def _raw_string(self, start: int) -> int | None:
        """The end of the raw string literal starting at `start`, or None where there is none.
        Its body is searched in the written text, as the preprocessor undoes splices there."""
        m = _RAW_OPENING.match(self.s, start)
        if not m:
            return None
        quote, paren = m.start(1) - 1, m.end() - 1
        written_quote, written_paren = self.src.written(quote), self.src.written(paren)
        if written_paren - written_quote != paren - quote:
            return None  # a splice in the delimiter: GCC refuses it, so an ordinary string
        closing = ")" + m.group(1) + '"'
        end = self.src.text.find(closing, written_paren + 1)
        if end < 0:
            return len(self.s)  # unterminated: the rest of the file, for GCC too
        pos = self.src.spliced_pos(end + len(closing))
        suffix = _UD_SUFFIX.match(self.s, pos)
        return suffix.end() if suffix else pos

    def scan(self) -> _Scanner:
        at_line_start = True
        previous: list[str] = []  # the last two tokens, for "defined(__has_include)"
        while True:
            kind, text, start = self.token()
            if kind == "end":
                return self
            if kind == "nl":
                at_line_start = True
                continue
            if kind == "hash" and at_line_start:
                self._directive(start)
                previous = []
                continue  # the directive's own newline was left for the loop
            at_line_start = False
            if kind == "id":
                self._identifier(text, start, previous, in_directive=False)
            previous = (previous + [text])[-2:]

    def _directive(self, hash_at: int) -> None:
        line = self.src.line(hash_at)
        kind, name, start = self.token(across_lines=False)
        if kind == "number":  # a line marker, "# 33 "file""
            self._line_directive(line, hash_at, name)
            return
        if kind != "id":
            self._skip_line()
            return
        if name in _INCLUDES:
            self._named_operand(line, hash_at, angled_ok=True, next_=name == "include_next")
        elif name == "line":
            kind, number, _ = self.token(across_lines=False)
            self._line_directive(line, hash_at, number if kind == "number" else "")
            return
        elif name in ("ident", "sccs"):
            self.refusals.append(Refusal(line, self._spelled(hash_at),
                                         "is refused: its text goes to the assembler, which can "
                                         "read files while compiling"))
        elif name == "pragma":
            self._pragma(line, hash_at)
        elif name in ("error", "warning"):
            pass  # a message, not code
        else:
            self._rest_of_line(in_ifdef=name in _IFDEFS)
            return
        self._skip_line()

    def _spelled(self, start: int, end: int | None = None) -> str:
        end = self.s.find("\n", start) if end is None else end
        return _shown(self.s[start:end if end >= 0 else len(self.s)])

    def _skip_line(self) -> None:
        while self.token(across_lines=False)[0] != "end":
            pass

    def _rest_of_line(self, in_ifdef: bool) -> None:
        previous: list[str] = []
        while True:
            kind, text, start = self.token(across_lines=False)
            if kind == "end":
                return
            if kind == "id":
                self._identifier(text, start, previous, in_directive=True, in_ifdef=in_ifdef)
            previous = (previous + [text])[-2:]

    def _header_name(self, pos: int, across_lines: bool) -> tuple[str, bool, int] | None:
        """The "name" or <name> at `pos` (spaces and comments first), as the preprocessor reads
        a file name: no escapes, no comments inside; with where it ends."""
        pos = (_SPACE_LINES if across_lines else _SPACE).match(self.s, pos).end()
        m = _HEADER_NAME.match(self.s, pos)
        if not m:
            return None
        angled = m.group(2) is not None
        return (m.group(2) if angled else m.group(1)), angled, m.end()

    def _named_operand(self, line: int, start: int, angled_ok: bool, next_: bool = False) -> None:
        """The file name after #include, #embed, #pragma GCC dependency."""
        header = self._header_name(self.pos, across_lines=False)
        if header is None:
            rest = _SPACE.match(self.s, self.pos).end()
            # Nothing, or a name left open: the compiler itself says what is wrong.
            if rest < len(self.s) and self.s[rest] not in "\n\"<":
                self.refusals.append(Refusal(line, self._spelled(start),
                                             "names its file through a macro; write the file "
                                             "name itself (\"name.h\" or <name.h>)"))
            return  # nothing after it: the compiler says what is missing
        name, angled, end = header
        self.pos = end
        self.references.append(Reference(line, self._spelled(start, end), name,
                                         angled and angled_ok, next_))

    def _line_directive(self, line: int, start: int, number: str) -> None:
        """#line N and "# N": a file name there makes GCC quote that file's lines in its
        errors (tried: #line 1 "/etc/passwd" showed its first line)."""
        rest = self.token(across_lines=False)[0]
        if not number.isdigit() or rest != "end":
            why = ("is refused: with a file name the compiler quotes that file in its messages"
                   if number.isdigit() else
                   "is refused: write the line number itself, with no file name")
            self.refusals.append(Refusal(line, self._spelled(start), why))
        self._skip_line()

    def _pragma(self, line: int, start: int) -> None:
        kind, first, _ = self.token(across_lines=False)
        if kind == "id" and first == "GCC":
            kind, second, _ = self.token(across_lines=False)
            if second == "dependency":
                self._named_operand(line, start, angled_ok=True)
            elif second == "pch_preprocess":
                self.refusals.append(Refusal(line, self._spelled(start),
                                             "is refused: it loads another file"))
            return
        if kind == "id":
            self._rest_of_line(in_ifdef=False)

    def _identifier(self, name: str, start: int, previous: list[str], in_directive: bool,
                    in_ifdef: bool = False) -> None:
        if name not in _NOTABLE:
            return
        line = self.src.line(start)
        if name in _ASM:
            self.refusals.append(Refusal(line, name, "is refused: inline assembly is not part "
                                         "of this course, and it can read files while "
                                         "compiling; write the code in CUDA C++"))
            return
        after = _SPACE_LINES.match(self.s, self.pos).end() if not in_directive else \
            _SPACE.match(self.s, self.pos).end()
        opens = after < len(self.s) and self.s[after] == "("
        if name in _ASSEMBLER_ATTRIBUTES and opens:
            self.refusals.append(Refusal(line, f"{name}(...)", "is refused: this attribute's "
                                         "text goes to the assembler, which can read files "
                                         "while compiling"))
        elif name in _HAS_INCLUDE:
            if opens:
                header = self._header_name(after + 1, across_lines=not in_directive)
                if header is None:
                    self.refusals.append(Refusal(line, self._spelled(start), "names its file "
                                                 "through a macro; write the file name itself "
                                                 "(\"name.h\" or <name.h>)"))
                    return
                file, angled, end = header
                self.pos = end
                quoted = f"<{file}>" if angled else f'"{file}"'
                self.references.append(Reference(line, _shown(f"{name}({quoted})"), file, angled,
                                                 name == "__has_include_next"))
            elif not (in_ifdef or "defined" in previous):
                self.refusals.append(Refusal(line, name, "is refused unless written "
                                             f"{name}(\"name.h\") with the file name itself"))
        elif name == "_Pragma" and opens:
            self._pragma_operator(line, start, after + 1, across_lines=not in_directive)

    def _pragma_operator(self, line: int, start: int, pos: int, across_lines: bool) -> None:
        """_Pragma("..."): the string, unquoted, is a #pragma line."""
        self.pos = pos
        kind, text, _ = self.token(across_lines)
        closing = self.token(across_lines)[1] if kind == "string" else ""
        if kind != "string" or closing != ")" or text[-1:] != '"':
            self.refusals.append(Refusal(line, self._spelled(start), "is refused: give _Pragma "
                                         "a string literal, or write the #pragma line itself"))
            return
        body = text[text.index('"') + 1:-1].replace('\\"', '"').replace("\\\\", "\\")
        inner = _Scanner("#pragma " + body.replace("\n", " ")).scan()
        for r in inner.references:
            self.references.append(Reference(line, f"_Pragma({_shown(text)})", r.name, r.angled))
        for r in inner.refusals:
            self.refusals.append(Refusal(line, f"_Pragma({_shown(text)})", r.why))


def scan(text: str) -> tuple[list[Reference], list[Refusal]]:
    """The files a source's directives name, and what it writes that is refused outright."""
    scanner = _Scanner(text).scan()
    return scanner.references, scanner.refusals


# Scans by (real path, size, modification time): the exercises of a chapter share its folder,
# and a stray binary there costs seconds each time.
_scanned_before: dict[tuple, tuple[list[Reference], list[Refusal]]] = {}


def _scan_file_content(real: str, size: int, mtime_ns: int) -> tuple[list[Reference],
                                                                       list[Refusal]]:
    key = (real, size, mtime_ns)
    found = _scanned_before.get(key)
    if found is None:
        with open(real, "rb") as f:
            text = f.read(MAX_FILE_BYTES + 1).decode("utf-8", errors="replace")
        found = scan(text)
        if len(_scanned_before) > 1000:
            _scanned_before.clear()
        _scanned_before[key] = found
    return found


# --- the check --------------------------------------------------------------------------------

def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _real(path: str) -> str | None:
    """The path with every link resolved, or None where it cannot be one (a NUL in it)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def _kind(path: str) -> str:
    """"file", "folder", "special" (a pipe, a device: reading one can hang or never end) or
    "" where nothing is there; links followed."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return ""
    return "file" if stat.S_ISREG(mode) else "folder" if stat.S_ISDIR(mode) else "special"


class _Guard:
    def __init__(self, options: GradeOptions, ex: Exercise):
        self.ex = ex
        self.chapter = os.fspath(options.submission / ex.chapter)
        self.chapter_real = os.path.realpath(self.chapter)
        self.submission_real = os.path.realpath(options.submission)
        course = [options.root / "support" / "include", ex.directory]
        if ex.shared_directory is not None:
            course.append(ex.shared_directory)
        self.course_real = [os.path.realpath(d) for d in course]
        # Where the compiler looks, in Meson's order; the course root and the build directory
        # come with every target (Meson's implicit include directories).
        self.search = [self.chapter, *map(os.fspath, course), os.fspath(options.root),
                       os.fspath(options.build_dir)]
        self.implicit = [os.fspath(options.root), os.fspath(options.build_dir)]
        self.findings: list[Finding] = []
        self.scanned: set[str] = set()
        self.bytes_left = MAX_TOTAL_BYTES
        api = ex.directory / f"{ex.name}.h"
        self.hint = (f"include only your own files, the course headers ("
                     f"{api.name + ', ' if api.is_file() else ''}course/...) and system headers")

    def shown(self, path: str) -> str:
        return _shown(os.path.normpath(os.path.relpath(path, self.chapter)))

    def run(self) -> list[Finding]:
        if (os.path.islink(self.chapter)
                or not _inside(self.chapter_real, self.submission_real)):
            self.findings.append(Finding(self.ex.chapter, 0, "", "is a link to a folder outside "
                                         "your submission; make it a folder of its own"))
            return self.findings
        stand_ins = self._walk()
        queue = [os.path.join(self.chapter, f) for f in self.ex.files] + stand_ins
        while queue and len(self.findings) < MAX_FINDINGS:
            path = queue.pop(0)
            queue.extend(self._scan_file(path))
        return self.findings

    def _walk(self) -> list[str]:
        """Finds the links in the chapter folder that lead out of it and that the compiler
        could follow for this exercise (its own files, folders, names a header could have;
        another file is reached only by an include, which _resolve checks); returns the files
        there that could stand in for a system header."""
        own_files = {os.path.join(self.chapter, f) for f in self.ex.files}
        stand_ins, seen = [], 0
        for folder, dirs, files in os.walk(self.chapter):  # links to folders: not followed
            names = set(files)
            for name in sorted(dirs) + sorted(files):
                seen += 1
                if seen > MAX_FOLDER_ENTRIES:
                    self.findings.append(Finding(self.ex.chapter, 0, "", f"holds more than "
                                                 f"{MAX_FOLDER_ENTRIES} files and folders, too "
                                                 "many to check; keep only your sources there"))
                    return stand_ins
                path = os.path.join(folder, name)
                suffix = os.path.splitext(name)[1]
                if os.path.islink(path):
                    reachable = (name in dirs or path in own_files
                                 or suffix in _SHADOW_SUFFIXES)
                    if reachable and not _inside(os.path.realpath(path), self.chapter_real):
                        what = "folder" if name in dirs else "file"
                        self.findings.append(Finding(self.shown(path), 0, "", f"is a link to a "
                                                     f"{what} outside your submission; copy the "
                                                     f"{what} itself into your submission"))
                    continue
                if _kind(path) == "special":
                    self.findings.append(Finding(self.shown(path), 0, "", "is not a file (a "
                                                 "pipe or a device); remove it"))
                    continue
                if name in names and not name.startswith(".") and suffix in _SHADOW_SUFFIXES:
                    stand_ins.append(path)
            dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(folder, d)))
        return stand_ins

    def _scan_file(self, path: str) -> list[str]:
        """Scans one file of the chapter folder; returns the files of the folder it includes."""
        real = _real(path)
        if real is None or real in self.scanned or not _inside(real, self.chapter_real) \
                or _kind(real) != "file":
            return []  # a link out or a pipe was named by _walk; a missing file is the pipeline's
        self.scanned.add(real)
        shown = self.shown(path)
        try:
            info = os.stat(real)
            if info.st_size > min(MAX_FILE_BYTES, self.bytes_left):
                self.findings.append(Finding(shown, 0, "", "is too large to check (your chapter "
                                             f"folder may hold {MAX_TOTAL_BYTES // 2**20} MiB "
                                             f"to check, a file {MAX_FILE_BYTES // 2**20} MiB); "
                                             "keep only your sources there"))
                return []
            self.bytes_left -= info.st_size
            references, refusals = _scan_file_content(real, info.st_size, info.st_mtime_ns)
        except OSError as error:
            self.findings.append(Finding(shown, 0, "", f"cannot be read "
                                         f"({error.strerror or error})"))
            return []
        for r in refusals:
            self.findings.append(Finding(shown, r.line, r.spelled, r.why))
        more = []
        for ref in references:
            own, why = self._resolve(ref, os.path.dirname(path))
            if why:
                self.findings.append(Finding(shown, ref.line, ref.spelled, why))
            more.extend(own)
        return more

    def _resolve(self, ref: Reference, includer_folder: str) -> tuple[list[str], str]:
        """The files of the submission a reference reaches, or why it is refused. Every place
        the compiler could find the name must be acceptable, so that the search order (and
        include_next's skipping) does not matter."""
        name = ref.name
        if not name:
            return [], ""  # the compiler says the name is empty
        outside = f"reaches outside your submission and the course's headers; {self.hint}"
        if name.startswith("/"):
            return [], outside
        parts = name.split("/")
        bases = self.search if ref.angled and not ref.next else [includer_folder, *self.search]
        own: list[str] = []
        found = False
        for base in bases:
            candidate = os.path.join(base, name)
            real = _real(candidate)
            if real is None or _kind(real) in ("", "folder"):
                continue
            found = True
            if _inside(real, self.chapter_real):
                own.append(candidate)
            elif ".." not in parts and any(_inside(real, d) for d in self.course_real):
                if not name.endswith(COURSE_HEADER_SUFFIXES):
                    return [], (f"is one of the course's own sources, not a header; "
                                f"{self.hint}")
            else:
                return [], outside
        if found:
            return own, ""
        # Found nowhere now: a system header, or a name the compiler will not find.
        suffix = os.path.splitext(parts[-1])[1]
        if ".." in parts:
            return [], f"goes up out of your folder with '..'; {self.hint}"
        if "\x00" in name or any(os.path.lexists(os.path.join(d, parts[0]))
                                 for d in self.implicit):
            return [], outside  # into the course's folders or the build directory
        if suffix not in SYSTEM_HEADER_SUFFIXES and not (
                suffix == "" and (len(parts) > 1 or name in STANDARD_HEADERS)):
            return [], (f"is not a file of your submission, a course header or a system "
                        f"header; {self.hint}")
        return [], ""


def check(options: GradeOptions, ex: Exercise) -> StageResult | None:
    """None when the exercise's sources name only what they may; else a failed build stage
    whose message has one sentence per finding, and details.refused the findings."""
    findings = _Guard(options, ex).run()
    if not findings:
        return None
    shown = findings[:20]
    sentences = [f.sentence() for f in shown]
    if len(findings) > len(shown):
        sentences.append(f"... and {len(findings) - len(shown)} more.")
    return StageResult(StageName.BUILD, StageStatus.FAILED,
                       message="\n".join(sentences),
                       details=BuildDetails(refused=[f.as_dict() for f in findings]))


# --- compiler output --------------------------------------------------------------------------

# Lines that say where a diagnostic is: gcc's "path:12:5: error: ...", "path: In function ...",
# "In file included from path:3:" and its "                 from path:7,"; nvcc's (EDG's)
# "path(12): error: ..." and "... at line 12 of path".
_LOCATED = [
    re.compile(r"^(?:In file included|\s+) from (?P<path>[^:]+):\d+[:,]?$"),
    re.compile(r"^(?P<path>[^\s:(][^:]*?)\((?P<line>\d+)\): "),
    re.compile(r"^(?P<path>[^\s:][^:]*?):(?P<line>\d+)(?::\d+)?:(?: |$)"),
    re.compile(r"^(?P<path>[^\s:][^:]*?): (?:In |At |required from)"),
    re.compile(r"\bat line \d+ of \"?(?P<path>[^\"\s]+)\"?"),
]
# Lines that end a diagnostic's quoted source: ninja's, and the compilers' own about the run.
_BOUNDARY = re.compile(r"^(?:FAILED: |\[\d+/\d+\] |ninja: |\d+ errors? detected in |"
                       r"compilation terminated\.|(?:cc1plus|cc1|gcc|g\+\+|nvcc|ptxas|nvlink)\b)")
_PSEUDO_FILES = ("<built-in>", "<command-line>", "<stdin>", "<command line>")


def system_include_roots() -> list[str]:
    """Where the compilers' own headers are: a diagnostic there shows nothing private."""
    roots = ["/usr/include", "/usr/local/include", "/usr/lib/gcc", "/usr/lib64/gcc",
             "/usr/local/cuda", "/opt/cuda", "/opt/nvidia"]
    roots += [os.environ[v] for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    return sorted({os.path.realpath(r) for r in roots})


def filter_compiler_output(text: str, allowed_roots: list[Path], base: Path | None = None,
                           system_roots: list[str] | None = None) -> str:
    """The compilers' output with every diagnostic located outside `allowed_roots` (the
    submission and the course's include folders, never the whole course, whose solutions are
    in it) and outside the system's include folders replaced by one line, WITHHELD, together
    with the source lines quoted under it. Relative paths are taken from `base` (ninja's build
    directory; the current directory by default)."""
    base_dir = os.fspath(base) if base is not None else os.getcwd()
    allowed = [os.path.realpath(r) for r in allowed_roots]
    allowed += system_include_roots() if system_roots is None else \
        [os.path.realpath(r) for r in system_roots]

    def permitted(path: str) -> bool:
        if path in _PSEUDO_FILES:
            return True
        real = _real(os.path.join(base_dir, path))
        return real is not None and any(_inside(real, root) for root in allowed)

    out: list[str] = []
    withholding = False
    for line in text.splitlines():
        located = next((m for m in (p.search(line) if p is _LOCATED[-1] else p.match(line)
                                    for p in _LOCATED) if m), None)
        if located is not None:
            withholding = not permitted(located.group("path"))
            if not withholding:
                out.append(line)
            elif not out or out[-1] != WITHHELD:
                out.append(WITHHELD)
        elif _BOUNDARY.match(line):
            withholding = False
            out.append(line)
        elif not withholding:
            out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")
