"""grader/stages/sources.py: a student's sources may name only their own files, the course's
headers and system headers, and the compilers' messages about other files are withheld.

Each case builds a small course and submission in tmp_path with real files and links; the last
cases check the real course's solutions and skeletons, and gcc's own output where gcc is here.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT, needs_solutions
from grader import manifest
from grader.manifest import Exercise
from grader.model import StageStatus
from grader.stages import sources
from grader.stages.common import GradeOptions

CHAPTER = "ch01_programming_model"
SECRET = "TOPSECRET-do-not-show"


class Course:
    """A tiny course root (support/include/course/x.h, one exercise folder, a solution), a
    submission inside it (workspace/, as `grade` uses), and a folder outside both."""

    def __init__(self, tmp: Path, submission: Path | None = None):
        self.root = tmp / "course"
        self.outside = tmp / "outside"
        for folder in (self.root / "support" / "include" / "course", self.outside):
            folder.mkdir(parents=True)
        (self.root / "support" / "include" / "course" / "x.h").write_text("#pragma once\n")
        self.exercise_dir = self.root / "chapters" / CHAPTER / "vector_add"
        self.exercise_dir.mkdir(parents=True)
        for name, text in {"vector_add.h": "#pragma once\nvoid launch();\n",
                           "vector_add_baseline.cu": f"// {SECRET} baseline\n",
                           "vector_add_hidden_test.cpp": f"// {SECRET} hidden\n",
                           "vector_add.toml": "[exercise]\n"}.items():
            (self.exercise_dir / name).write_text(text)
        solutions = self.root / "solutions" / CHAPTER
        solutions.mkdir(parents=True)
        (solutions / "vector_add.cu").write_text(f"// {SECRET} reference\n")
        (self.outside / "secret.h").write_text(f"{SECRET}\n")
        self.submission = submission or self.root / "workspace"
        self.folder = self.submission / CHAPTER
        self.folder.mkdir(parents=True)
        self.build = self.root / "build" / "grade" / "workspace-1"
        self.build.mkdir(parents=True)
        self.exercise = Exercise(name="vector_add", chapter=CHAPTER, title="Vector addition",
                                 files=("vector_add.cu",), directory=self.exercise_dir,
                                 manifest=self.exercise_dir / "vector_add.toml")
        self.options = GradeOptions(root=self.root, submission=self.submission,
                                    build_dir=self.build, seed=1)

    def write(self, name: str, text: str | bytes) -> Path:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return path

    def student(self, text: str | bytes) -> Path:
        return self.write("vector_add.cu", text)

    def check(self):
        return sources.check(self.options, self.exercise)

    def refused(self) -> list[dict]:
        result = self.check()
        assert result is not None, "expected the sources to be refused"
        assert result.name == "build" and result.status == StageStatus.FAILED
        # Never the content of a file outside the submission, anywhere in the result.
        assert SECRET not in result.message and SECRET not in json.dumps(result.details.to_dict())
        found = result.details["refused"]
        assert len(result.message.splitlines()) == len(found)  # one sentence per finding
        return found


@pytest.fixture
def course(tmp_path) -> Course:
    return Course(tmp_path)


KERNEL = "__global__ void add(float* x) { x[threadIdx.x] += 1.0f; }\n"


# --- accepted ---------------------------------------------------------------------------------

def test_own_course_and_system_headers_are_accepted(course):
    course.write("helpers.cuh", "#pragma once\n#include <cstdio>\n")
    course.write("detail/more.h", '#pragma once\n#include "../helpers.cuh"\n')
    course.student('#include "vector_add.h"\n#include "helpers.cuh"\n#include <detail/more.h>\n'
                   '#include "course/x.h"\n#include <course/x.h>\n#include <cstdio>\n'
                   '#include <vector>\n#include <cuda_runtime.h>\n#include <cuda/std/atomic>\n'
                   '#include <cub/cub.cuh>\n' + KERNEL)
    assert course.check() is None


def test_a_link_inside_the_folder_is_accepted(course):
    course.write("real.h", "#pragma once\n")
    os.symlink("real.h", course.folder / "alias.h")
    course.student('#include "alias.h"\n' + KERNEL)
    assert course.check() is None


def test_comments_strings_and_raw_strings_hide_nothing(course):
    course.student('// #include "/etc/passwd"\n'
                   '/* a comment\n#include "/etc/passwd"\n*/\n'
                   'const char* a = "#include \\"/etc/passwd\\"";\n'
                   'const char* b = R"x(\n#include "/etc/passwd"\n)x";\n'
                   'const char* c = "asm(\\".incbin\\")";  // asm\n'
                   '#if defined(__has_include)\n#endif\n#ifdef __has_include\n#endif\n'
                   '#error not an asm statement\n' + KERNEL)
    assert course.check() is None


def test_harmless_pragmas_and_line_numbers_are_accepted(course):
    course.student('#pragma once\n#pragma GCC system_header\n#pragma unroll\n#line 40\n'
                   '#define UNROLL _Pragma("unroll")\nint section_count = 1;\n' + KERNEL)
    assert course.check() is None


def test_a_submission_outside_the_course_is_checked_alike(tmp_path):
    outside = Course(tmp_path, submission=tmp_path / "elsewhere" / "alice")
    outside.student('#include "vector_add.h"\n#include "../../../course/solutions/'
                    f'{CHAPTER}/vector_add.cu"\n')
    found = outside.refused()
    assert [f["line"] for f in found] == [2]


# --- refused: what the names reach ------------------------------------------------------------

def test_an_absolute_include_is_refused_with_one_clear_sentence(course):
    course.student('#include <cstdio>\n#include "/etc/passwd"\n' + KERNEL)
    result = course.check()
    assert result.message == (
        'vector_add.cu:2: #include "/etc/passwd" reaches outside your submission and the '
        "course's headers; include only your own files, the course headers (vector_add.h, "
        "course/...) and system headers.")
    assert result.details["refused"] == [{
        "file": "vector_add.cu", "line": 2, "directive": '#include "/etc/passwd"',
        "why": result.details["refused"][0]["why"]}]


def test_an_outside_file_by_absolute_path_is_refused_unread(course):
    course.student(f'#include "{course.outside / "secret.h"}"\n')
    assert [f["line"] for f in course.refused()] == [1]


@pytest.mark.parametrize("name", [
    f"../../solutions/{CHAPTER}/vector_add.cu",      # up and into the solutions
    f"solutions/{CHAPTER}/vector_add.cu",            # through the course root (Meson's -I)
    f"chapters/{CHAPTER}/vector_add/vector_add_hidden_test.cpp",
    "../../../outside/secret.h",
    "build/grade/other-student/meson-logs/meson-log.txt",
    "meson-logs/meson-log.txt",                      # the build directory (Meson's -I)
    "build/grade/bob-1/vector_add_test",             # not linked yet: refused all the same
])
def test_names_leading_into_the_course_or_out_are_refused(course, name):
    course.student(f'#include "{name}"\n' + KERNEL)
    found = course.refused()
    assert [(f["line"], f["directive"]) for f in found] == [(1, f'#include "{name}"')]


@pytest.mark.parametrize("name", ["vector_add_baseline.cu", "vector_add_hidden_test.cpp"])
def test_course_sources_in_the_exercise_folder_are_refused(course, name):
    course.student(f'#include "{name}"\n#include <{name}>\n')
    found = course.refused()
    assert [f["line"] for f in found] == [1, 2]
    assert all("one of the course's own sources" in f["why"] for f in found)


def test_the_shared_folder_gives_headers_not_sources(course):
    shared = course.exercise_dir.parent / "ladder"
    shared.mkdir()
    (shared / "ladder.cuh").write_text("#pragma once\n")
    (shared / "ladder_second_pass.cu").write_text(f"// {SECRET}\n")
    course.exercise = dataclasses.replace(course.exercise, shared="ladder")
    course.student('#include "ladder.cuh"\n#include "ladder_second_pass.cu"\n')
    assert [f["line"] for f in course.refused()] == [2]


def test_a_macro_include_is_refused(course):
    course.student('#define HEADER "vector_add.h"\n#include HEADER\n')
    (finding,) = course.refused()
    assert finding["line"] == 2 and "through a macro" in finding["why"]


def test_a_digraph_include_is_seen(course):
    course.student('%:include "/etc/passwd"\n')
    assert [f["directive"] for f in course.refused()] == ['%:include "/etc/passwd"']


def test_an_include_split_by_continuations_is_seen(course):
    course.student('int a;\n#inc\\\nlude \\\n"/etc/passwd"\nint b;\n')
    (finding,) = course.refused()
    assert (finding["line"], finding["directive"]) == (2, '#include "/etc/passwd"')


def test_a_backslash_space_newline_splices_too(course):
    course.student('#  inc\\  \nlude "/etc/passwd"\n')   # gcc: a warning, and it includes
    assert len(course.refused()) == 1


def test_a_directive_after_a_comment_or_a_lone_carriage_return_is_seen(course):
    course.student('/* a\n b */ # include "/etc/passwd"\nint x;\r#include "/etc/shadow"\n')
    assert [f["line"] for f in course.refused()] == [2, 4]


def test_a_raw_string_ends_where_the_compiler_ends_it(course):
    # Splices are undone inside raw strings: the first )x" is not its end, the second is, and
    # the include after it is real (tried with gcc).
    course.student('const char* s = R"x( )\\\nx" /* )x"\n#include "/etc/passwd"\n*/\n')
    assert [f["line"] for f in course.refused()] == [3]


def test_a_suffix_after_a_string_is_not_a_raw_string(course):
    # "a"R is a string with a user-defined suffix, so "x( opens an ordinary string that ends
    # with its line; the include below it is real.
    course.student('auto s = "a"R"x(\n#include "/etc/passwd"\n)x";\n')
    assert [f["line"] for f in course.refused()] == [2]


def test_has_include_of_an_outside_file_is_refused(course):
    course.student('#if __has_include("/etc/passwd") || __has_include_next(<vector>)\n#endif\n')
    (finding,) = course.refused()
    assert finding["directive"] == '__has_include("/etc/passwd")'


def test_embed_and_pragma_dependency_are_refused(course):
    course.student('#embed "/etc/passwd" limit(8)\n#pragma GCC dependency "/etc/passwd"\n'
                   '_Pragma("GCC dependency \\"/etc/passwd\\"")\n#import "/etc/passwd"\n')
    assert [f["line"] for f in course.refused()] == [1, 2, 3, 4]


def test_embedding_a_course_source_is_refused(course):
    course.student('const char data[] = {\n#embed "vector_add_baseline.cu"\n};\n')
    assert [f["line"] for f in course.refused()] == [2]


# --- refused: what makes the compiler or assembler read files ---------------------------------

def test_a_line_directive_with_a_file_name_is_refused(course):
    # gcc quotes the named file's lines under its errors (tried: #line 1 "/etc/passwd").
    course.student('#line 1 "/etc/passwd"\n# 1 "/etc/passwd"\n#line N\n')
    assert [f["line"] for f in course.refused()] == [1, 2, 3]


@pytest.mark.parametrize("code", [
    'asm(".incbin \\"/etc/shadow\\"");\n',
    '__asm__ volatile("nop");\n',
    'void f() { __asm("nop"); }\n',
    '#define ASSEMBLE asm\n',
])
def test_inline_assembly_is_refused(course, code):
    course.student(code)
    (finding,) = course.refused()
    assert "inline assembly is not part of this course" in finding["why"]


@pytest.mark.parametrize("code", [
    '__attribute__((section(".rodata\\n.incbin \\"/etc/shadow\\"\\n#"))) int y = 1;\n',
    'static int y __attribute__((__weakref__("x")));\n',
    '[[gnu::symver("x@V1")]] int z;\n',
    '#ident "x"\n',
    '_Pragma(STRING)\n',
    '#pragma GCC pch_preprocess "x.gch"\n',
])
def test_what_feeds_the_assembler_or_loads_files_is_refused(course, code):
    course.student(code)
    assert len(course.refused()) == 1


# --- links, chains, odd files -----------------------------------------------------------------

def test_a_student_file_linked_outside_is_refused_unread(course):
    os.symlink(course.outside / "secret.h", course.folder / "vector_add.cu")
    (finding,) = course.refused()
    assert finding["file"] == "vector_add.cu" and finding["line"] == 0
    assert course.check().message == ("vector_add.cu is a link to a file outside your "
                                      "submission; copy the file itself into your submission.")


def test_an_included_header_linked_outside_is_refused(course):
    os.symlink(course.root / "solutions" / CHAPTER / "vector_add.cu", course.folder / "mine.h")
    course.student('#include "mine.h"\n' + KERNEL)
    found = course.refused()
    assert {(f["file"], f["line"]) for f in found} == {("mine.h", 0), ("vector_add.cu", 1)}


def test_a_relative_link_out_of_the_folder_is_refused(course):
    os.symlink("../../solutions", course.folder / "ref")
    course.student(f'#include "ref/{CHAPTER}/vector_add.cu"\n')
    files = {f["file"] for f in course.refused()}
    assert files == {"ref", "vector_add.cu"}


def test_a_link_out_counts_against_the_exercises_that_can_reach_it(course):
    # Another exercise's file linked to the solutions is that exercise's finding; a header
    # linked out is everyone's, as any system header's include may reach it.
    os.symlink(course.root / "solutions" / CHAPTER / "vector_add.cu",
               course.folder / "thread_indexing.cu")
    course.student(KERNEL)
    assert course.check() is None
    os.symlink(course.outside / "secret.h", course.folder / "cstdio")
    assert [f["file"] for f in course.refused()] == ["cstdio"]


def test_a_chapter_folder_linked_outside_is_refused(tmp_path):
    course = Course(tmp_path)
    shutil.rmtree(course.folder)
    os.symlink(course.root / "solutions" / CHAPTER, course.folder)
    (finding,) = course.refused()
    assert finding["file"] == CHAPTER and "outside your submission" in finding["why"]


def test_a_nested_include_is_followed_and_named(course):
    course.write("own.h", '#pragma once\n#include "inner/deeper.h"\n')
    course.write("inner/deeper.h", '#pragma once\n\n#include "../../../../outside/secret.h"\n')
    course.student('#include "own.h"\n' + KERNEL)
    (finding,) = course.refused()
    assert (finding["file"], finding["line"]) == ("inner/deeper.h", 3)


def test_a_header_standing_in_for_a_system_header_is_checked(course):
    # The chapter folder is searched before the C++ library: a course header's <vector>
    # would include this file, though no student file names it.
    course.write("vector", '#include "/etc/passwd"\n')
    course.student(KERNEL)
    (finding,) = course.refused()
    assert (finding["file"], finding["line"]) == ("vector", 1)


def test_unusual_bytes_and_names_do_not_stop_the_scan(course):
    course.student(b'// caf\xe9 \xff\xfe\n\x00#include "/etc/passwd"\nint \xc3\xa9t\xc3\xa9;\n')
    odd = os.fsencode(course.folder) + b"/odd\xffname.h"
    with open(odd, "wb") as f:
        f.write(b'\xfe#pragma once\n#include "/etc/group"\n')
    found = course.refused()
    assert [(f["file"], f["line"]) for f in found] == [("vector_add.cu", 2),
                                                       ("odd\\xffname.h", 2)]


def test_a_pipe_in_the_folder_is_refused(course):
    os.mkfifo(course.folder / "stream.h")
    course.student('#include "stream.h"\n' + KERNEL)
    assert any(f["file"] == "stream.h" and "not a file" in f["why"] for f in course.refused())


def test_names_found_nowhere_must_look_like_system_headers(course):
    course.student('#include "vector_add_test"\n#include "notes.txt"\n#include <no_such.h>\n')
    assert [f["line"] for f in course.refused()] == [1, 2]


# --- the real course --------------------------------------------------------------------------

def _real_course(submission: Path, tmp_path: Path) -> list[str]:
    options = GradeOptions(root=ROOT, submission=submission, build_dir=tmp_path / "build", seed=1)
    exercises = manifest.discover(ROOT)
    assert len(exercises) > 10
    problems = []
    for ex in exercises:
        result = sources.check(options, ex)
        if result is not None:
            problems.append(f"{ex.key}: {result.message}")
    return problems


@needs_solutions
def test_the_course_solutions_pass(tmp_path):
    assert _real_course(ROOT / "solutions", tmp_path) == []


def test_the_course_skeletons_pass(tmp_path):
    assert _real_course(ROOT / "skeletons", tmp_path) == []


@needs_solutions
def test_the_real_solution_is_refused_when_a_student_includes_it(tmp_path):
    workspace = tmp_path / "workspace" / CHAPTER
    workspace.mkdir(parents=True)
    (workspace / "vector_add.cu").write_text(
        f'#include "{ROOT}/solutions/{CHAPTER}/vector_add.cu"\n'
        f'#include "solutions/{CHAPTER}/vector_add.cu"\n')
    options = GradeOptions(root=ROOT, submission=tmp_path / "workspace",
                           build_dir=tmp_path / "build", seed=1)
    ex = next(e for e in manifest.discover(ROOT) if e.name == "vector_add")
    result = sources.check(options, ex)
    assert [f["line"] for f in result.details["refused"]] == [1, 2]


# --- compiler output --------------------------------------------------------------------------

GCC_SAMPLE = """\
[1/3] Compiling C++ object libvector_add_submission.a.p/vector_add.cu.o
FAILED: libvector_add_submission.a.p/vector_add.cu.o
In file included from ../../workspace/ch01_programming_model/vector_add.cu:2:
/srv/secret/solution.h: In function 'int main()':
/srv/secret/solution.h:1:1: error: 'TOPSECRET' does not name a type
    1 | TOPSECRET alpha beta
      | ^~~~~~~~~
/srv/secret/solution.h:2:1: note: another
    2 | TOPSECRET gamma
../../workspace/ch01_programming_model/vector_add.cu:5:3: error: 'foo' was not declared in this scope
    5 |   foo();
      |   ^~~
/usr/include/c++/12/bits/stl_vector.h:10:5: note: candidate: 'vector()'
   10 |     vector() = default;
ninja: build stopped: subcommand failed.
"""

NVCC_SAMPLE = """\
/srv/secret/solution.h(1): error: identifier "TOPSECRET" is undefined
    TOPSECRET alpha beta
    ^

../../workspace/ch01_programming_model/vector_add.cu(5): error: identifier "foo" is undefined
    foo();
    ^

2 errors detected in the compilation of "../../workspace/ch01_programming_model/vector_add.cu".
"""


def _filtered(tmp_path: Path, text: str) -> str:
    build = tmp_path / "build" / "grade"
    build.mkdir(parents=True)
    return sources.filter_compiler_output(
        text, [tmp_path / "workspace" / CHAPTER, tmp_path / "support" / "include"], base=build,
        system_roots=["/usr/include"])


def test_filter_withholds_gcc_diagnostics_elsewhere(tmp_path):
    out = _filtered(tmp_path, GCC_SAMPLE)
    assert "TOPSECRET" not in out and "/srv/secret" not in out
    assert out.splitlines() == [
        "[1/3] Compiling C++ object libvector_add_submission.a.p/vector_add.cu.o",
        "FAILED: libvector_add_submission.a.p/vector_add.cu.o",
        "In file included from ../../workspace/ch01_programming_model/vector_add.cu:2:",
        sources.WITHHELD,
        "../../workspace/ch01_programming_model/vector_add.cu:5:3: error: 'foo' was not "
        "declared in this scope",
        "    5 |   foo();",
        "      |   ^~~",
        "/usr/include/c++/12/bits/stl_vector.h:10:5: note: candidate: 'vector()'",
        "   10 |     vector() = default;",
        "ninja: build stopped: subcommand failed."]


def test_filter_withholds_nvcc_diagnostics_elsewhere(tmp_path):
    out = _filtered(tmp_path, NVCC_SAMPLE)
    assert "TOPSECRET" not in out
    assert out.splitlines() == [
        sources.WITHHELD,
        '../../workspace/ch01_programming_model/vector_add.cu(5): error: identifier "foo" '
        "is undefined",
        "    foo();",
        "    ^",
        "",
        '2 errors detected in the compilation of "../../workspace/ch01_programming_model/'
        'vector_add.cu".']


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_filter_on_what_gcc_really_prints(course, tmp_path):
    # What the check exists to prevent, compiled anyway: gcc's errors quote the outside file.
    source = course.student(f'#include "{course.outside / "secret.h"}"\n'
                            ";\nint main() { undefined_call(); }\n")
    shown = subprocess.run(["g++", "-x", "c++", "-std=c++17", "-c", str(source), "-o", os.devnull],
                           capture_output=True, text=True).stderr
    assert SECRET in shown
    out = sources.filter_compiler_output(shown, [course.folder], base=tmp_path)
    assert SECRET not in out
    assert sources.WITHHELD in out and "undefined_call" in out
