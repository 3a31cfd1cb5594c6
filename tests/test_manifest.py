"""grader.manifest: loading, validation (one ManifestError naming file and field), discovery,
selection."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader import manifest
from grader.errors import GraderError, ManifestError

VALID = """\
[exercise]
name = "{name}"
chapter = "{chapter}"
title = "Fake exercise"
summary = "s"
files = ["{name}.cu"]
libraries = ["cublas"]
rdc = false
min_cc = 8.0

[correctness]
points = 60
timeout_s = 30

[sanitizer]
tools = ["racecheck"]
gtest_filter = "Small/*"
timeout_s = 100

[benchmark]
timeout_s = 50

[[performance]]
name = "bandwidth"
description = "d"
points = 40
measure = "mine"
baseline = "copy"
full_at = 0.8
zero_at = 0.3
hint = "h"
"""


def write(root: Path, chapter: str, name: str, text: str | None = None,
          folder: str | None = None, stem: str | None = None) -> Path:
    path = root / "chapters" / chapter / (folder or name) / f"{stem or folder or name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((text if text is not None else VALID).format(name=name, chapter=chapter))
    return path


def test_valid_manifest_loads_every_field(tmp_path):
    ex = manifest.load_manifest(write(tmp_path, "ch02_memory", "tiled"))
    assert ex.key == "ch02_memory/tiled" and ex.chapter_number == "ch02"
    assert ex.title == "Fake exercise" and ex.summary == "s"
    assert ex.files == ("tiled.cu",) and ex.libraries == ("cublas",) and ex.rdc is False
    assert ex.min_cc == 8.0
    assert ex.correctness_points == 60 and ex.test_timeout_s == 30
    assert ex.sanitizer_tools == ("memcheck", "racecheck")  # memcheck always runs
    assert ex.sanitizer_filter == "Small/*" and ex.sanitizer_timeout_s == 100
    assert ex.benchmark_timeout_s == 50
    [p] = ex.performance
    assert (p.name, p.points, p.measure, p.baseline, p.full_at, p.zero_at) == \
        ("bandwidth", 40, "mine", "copy", 0.8, 0.3)
    assert ex.max_points == 100


def test_minimal_manifest_defaults(tmp_path):
    text = ('[exercise]\nname = "{name}"\nchapter = "{chapter}"\ntitle = "t"\n'
            'files = ["{name}.cu"]\n[correctness]\npoints = 10\n')
    ex = manifest.load_manifest(write(tmp_path, "ch01_x", "mini", text))
    assert ex.sanitizer_tools == ("memcheck",) and ex.sanitizer_filter == "*"
    assert ex.performance == () and ex.max_points == 10 and ex.min_cc == 7.0
    assert ex.libraries == () and ex.rdc is False
    assert ex.case_timeout_s is None  # no case is stopped early unless the manifest says so


def test_case_timeout(tmp_path):
    text = edit(r"^timeout_s = 30\n", "timeout_s = 30\ncase_timeout_s = 12.5\n")
    assert manifest.load_manifest(write(tmp_path, "ch07_x", "deep", text)).case_timeout_s == 12.5
    text = edit(r"^timeout_s = 30\n", "timeout_s = 30\ncase_timeout_s = 0\n")
    with pytest.raises(manifest.ManifestError, match="greater than 0"):
        manifest.load_manifest(write(tmp_path, "ch07_x", "deep", text))


def test_sanitizer_tool_filters(tmp_path):
    text = edit(r"^timeout_s = 100\n", 'timeout_s = 100\n[sanitizer.tool_filters]\n'
                'racecheck = "Small/*n_1*"\n')
    ex = manifest.load_manifest(write(tmp_path, "ch02_x", "tiled", text))
    assert ex.sanitizer_tool_filters == (("racecheck", "Small/*n_1*"),)
    assert ex.sanitizer_filter_for("racecheck") == "Small/*n_1*"
    assert ex.sanitizer_filter_for("memcheck") == "Small/*"  # memcheck covers every case


def edit(pattern: str, replacement: str, count: int = 1) -> str:
    text, n = re.subn(pattern, replacement, VALID, count=count, flags=re.M)
    assert n, pattern
    return text


# (edited manifest text, field the error must name, words the problem must contain)
MALFORMED = {
    "missing name": (edit(r'^name = "\{name\}"\n', ""), "exercise.name", "required"),
    "missing title": (edit(r"^title = .*\n", ""), "exercise.title", "required"),
    "missing files": (edit(r"^files = .*\n", ""), "exercise.files", "required"),
    "missing points": (edit(r"^points = 60\n", ""), "correctness.points", "required"),
    "missing correctness": (edit(r"^\[correctness\]\npoints = 60\ntimeout_s = 30\n", ""),
                            "correctness", "table"),
    "missing exercise table": (edit(r"^\[exercise\]\n", ""), "manifest.chapter", "unknown"),
    "missing measure": (edit(r'^measure = "mine"\n', ""), "performance[0].measure", "required"),
    "title wrong type": (edit(r"^title = .*", "title = 3"), "exercise.title", "str"),
    "points wrong type": (edit(r"^points = 60", 'points = "60"'), "correctness.points", "int"),
    "points boolean": (edit(r"^points = 60", "points = true"), "correctness.points", "boolean"),
    "points zero": (edit(r"^points = 60", "points = 0"), "correctness.points", "greater than 0"),
    "timeout negative": (edit(r"^timeout_s = 30", "timeout_s = -1"), "correctness.timeout_s",
                         "greater than 0"),
    "files not a list": (edit(r"^files = .*", 'files = "x.cu"'), "exercise.files", "list"),
    "files empty": (edit(r"^files = .*", "files = []"), "exercise.files", "at least one"),
    "files with folder": (edit(r"^files = .*", 'files = ["src/x.cu"]'), "exercise.files",
                          "no folders"),
    "files bad suffix": (edit(r"^files = .*", 'files = ["x.py"]'), "exercise.files",
                         ".cu"),
    "files not strings": (edit(r"^files = .*", "files = [1]"), "exercise.files",
                          "non-empty strings"),
    "rdc wrong type": (edit(r"^rdc = false", 'rdc = "no"'), "exercise.rdc", "bool"),
    "unknown library": (edit(r'^libraries = .*', 'libraries = ["cufft"]'),
                        "exercise.libraries", "cufft"),
    "unknown tool": (edit(r'^tools = .*', 'tools = ["leakcheck"]'), "sanitizer.tools",
                     "leakcheck"),
    "filter of a tool not run": (edit(r"^timeout_s = 100\n", 'timeout_s = 100\n'
                                      '[sanitizer.tool_filters]\nsynccheck = "Small/*"\n'),
                                 "sanitizer.tool_filters.synccheck", "unknown field"),
    "filter of memcheck": (edit(r"^timeout_s = 100\n", 'timeout_s = 100\n'
                                '[sanitizer.tool_filters]\nmemcheck = "Small/*"\n'),
                           "sanitizer.tool_filters.memcheck", "unknown field"),
    "empty tool filter": (edit(r"^timeout_s = 100\n", 'timeout_s = 100\n'
                               '[sanitizer.tool_filters]\nracecheck = " "\n'),
                          "sanitizer.tool_filters.racecheck", "non-empty"),
    "min_cc too low": (edit(r"^min_cc = 8.0", "min_cc = 6.1"), "exercise.min_cc", "at least"),
    "unknown exercise field": (edit(r"^rdc = false", "rdc = false\nauthor = \"me\""),
                               "exercise.author", "unknown field"),
    "unknown top-level table": (VALID + "\n[extra]\nx = 1\n", "manifest.extra", "unknown field"),
    "unknown performance field": (edit(r'^hint = "h"', 'hint = "h"\nweight = 2'),
                                  "performance[0].weight", "unknown field"),
    "unknown correctness field": (edit(r"^timeout_s = 30", "timeout_s = 30\nretries = 2"),
                                  "correctness.retries", "unknown field"),
    "performance as table": (edit(r"^\[\[performance\]\]", "[performance]"), "performance",
                             "array of tables"),
    "zero_at equal full_at": (edit(r"^zero_at = 0.3", "zero_at = 0.8"),
                              "performance[0].zero_at", "below full_at"),
    "zero_at above full_at": (edit(r"^zero_at = 0.3", "zero_at = 0.9"),
                              "performance[0].zero_at", "below full_at"),
    "zero_at negative": (edit(r"^zero_at = 0.3", "zero_at = -0.1"), "performance[0].zero_at",
                         "at least"),
    "full_at zero": (edit(r"^full_at = 0.8", "full_at = 0"), "performance[0].full_at",
                     "greater than 0"),
    "baseline is measure": (edit(r'^baseline = "copy"', 'baseline = "mine"'),
                            "performance[0].baseline", "differ"),
    "duplicate performance": (VALID + VALID[VALID.index("[[performance]]"):],
                              "performance[1].name", "duplicate"),
    "bad name": (edit(r'^name = "\{name\}"', 'name = "Bad-Name"'), "exercise.name",
                 "lower_snake_case"),
    "bad chapter": (edit(r'^chapter = .*', 'chapter = "chapter1"'), "exercise.chapter",
                    "ch01_programming_model"),
    "name differs from folder": (edit(r'^name = "\{name\}"', 'name = "other"'),
                                 "exercise.name", "must match"),
    "chapter differs from folder": (edit(r'^chapter = .*', 'chapter = "ch09_other"'),
                                    "exercise.chapter", "must match"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_manifest_names_file_and_field(tmp_path, case):
    text, field, words = MALFORMED[case]
    path = write(tmp_path, "ch01_basics", "thing", text)
    with pytest.raises(ManifestError) as info:
        manifest.load_manifest(path)
    error = info.value
    message = str(error)
    assert str(path) in message
    assert error.field == field, message
    assert f": {field}: " in message
    assert words.lower() in message.lower()
    assert "\n" not in message
    assert isinstance(error, GraderError)


def test_bad_toml(tmp_path):
    path = write(tmp_path, "ch01_basics", "thing", VALID + "\nthis is = = not toml\n")
    with pytest.raises(ManifestError, match="not valid TOML") as info:
        manifest.load_manifest(path)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_not_utf8(tmp_path):
    path = write(tmp_path, "ch01_basics", "thing")
    path.write_bytes(b'[exercise]\nname = "\xff"\n')
    with pytest.raises(ManifestError, match="not valid TOML"):
        manifest.load_manifest(path)


def test_missing_file(tmp_path):
    with pytest.raises(ManifestError, match="file not found"):
        manifest.load_manifest(tmp_path / "nope.toml")


@pytest.mark.parametrize("line", ["points = nan", "points = inf"])
def test_non_finite_numbers_are_rejected(tmp_path, line):
    path = write(tmp_path, "ch01_basics", "thing", edit(r"^points = 60", line))
    with pytest.raises(ManifestError, match="correctness.points"):
        manifest.load_manifest(path)


# ------------------------------------------------------------------------------ discover

def test_discover_orders_by_chapter_then_folder(tmp_path):
    write(tmp_path, "ch02_memory", "b_ex")
    write(tmp_path, "ch01_basics", "z_ex")
    write(tmp_path, "ch01_basics", "a_ex")
    (tmp_path / "chapters" / "ch01_basics" / "README.md").write_text("chapter notes")
    keys = [e.key for e in manifest.discover(tmp_path)]
    assert keys == ["ch01_basics/a_ex", "ch01_basics/z_ex", "ch02_memory/b_ex"]


def test_discover_duplicate_names_across_chapters(tmp_path):
    write(tmp_path, "ch01_basics", "same")
    second = write(tmp_path, "ch02_memory", "same")
    with pytest.raises(ManifestError) as info:
        manifest.discover(tmp_path)
    message = str(info.value)
    assert str(second) in message and "exercise.name" in message
    assert "unique" in message


def test_discover_skips_folders_without_manifest(tmp_path):
    """Work in progress: a folder with no <name>.toml is skipped and listed as incomplete."""
    write(tmp_path, "ch01_basics", "good")
    lonely = tmp_path / "chapters" / "ch01_basics" / "lonely"
    lonely.mkdir(parents=True)
    renamed = write(tmp_path, "ch01_basics", "renamed")
    renamed.rename(renamed.with_name("other.toml"))
    assert [e.name for e in manifest.discover(tmp_path)] == ["good"]
    assert manifest.incomplete_folders(tmp_path) == [lonely, renamed.parent]


def test_discover_bad_chapter_folder(tmp_path):
    (tmp_path / "chapters" / "Chapter One").mkdir(parents=True)
    with pytest.raises(GraderError, match="Chapter One"):
        manifest.discover(tmp_path)


def test_discover_without_chapters(tmp_path):
    with pytest.raises(GraderError, match="no chapters/"):
        manifest.discover(tmp_path)


def test_discover_reports_the_malformed_file(tmp_path):
    write(tmp_path, "ch01_basics", "good")
    bad = write(tmp_path, "ch01_basics", "bad", edit(r"^title = .*\n", ""))
    with pytest.raises(ManifestError) as info:
        manifest.discover(tmp_path)
    assert str(bad) in str(info.value) and "exercise.title" in str(info.value)


# ------------------------------------------------------------------------------ select

@pytest.fixture
def course(tmp_path):
    for chapter, name in [("ch01_basics", "vector_add"), ("ch01_basics", "saxpy"),
                          ("ch02_memory", "transpose"), ("ch10_streams", "overlap")]:
        write(tmp_path, chapter, name)
    return manifest.discover(tmp_path)


def keys(exercises):
    return [e.key for e in exercises]


@pytest.mark.parametrize("patterns, expected", [
    ([], ["ch01_basics/saxpy", "ch01_basics/vector_add", "ch02_memory/transpose",
          "ch10_streams/overlap"]),
    (["ch01"], ["ch01_basics/saxpy", "ch01_basics/vector_add"]),
    (["ch01_basics"], ["ch01_basics/saxpy", "ch01_basics/vector_add"]),
    (["ch01_basics/"], ["ch01_basics/saxpy", "ch01_basics/vector_add"]),
    (["transpose"], ["ch02_memory/transpose"]),
    (["ch02_memory/transpose"], ["ch02_memory/transpose"]),
    (["ch02/transpose"], ["ch02_memory/transpose"]),
    ([" overlap "], ["ch10_streams/overlap"]),
    (["ch10"], ["ch10_streams/overlap"]),
    # order follows the course, duplicates are dropped
    (["overlap", "ch01", "saxpy"], ["ch01_basics/saxpy", "ch01_basics/vector_add",
                                    "ch10_streams/overlap"]),
])
def test_select(course, patterns, expected):
    assert keys(manifest.select(course, patterns)) == expected


def test_select_unknown_suggests_close_names(course):
    with pytest.raises(GraderError, match=r"unknown exercise or chapter 'vectoradd'.*"
                       r"did you mean vector_add"):
        manifest.select(course, ["vectoradd"])


def test_select_unknown_without_close_names(course):
    with pytest.raises(GraderError, match="'python3 -m grader list' shows them all"):
        manifest.select(course, ["zzzzzzzz"])


def test_select_one_unknown_among_known(course):
    with pytest.raises(GraderError, match="ch03"):
        manifest.select(course, ["ch01", "ch03"])


def test_course_sources(tmp_path):
    path = write(tmp_path, "ch01_basics", "thing")
    for f in ("thing_test.cpp", "thing_bench.cpp", "thing_reference.cpp", "thing_baseline.cu",
              "thing.h", "thing_reference.h", "other_helper.cpp"):
        (path.parent / f).write_text("")
    ex = manifest.load_manifest(path)
    assert manifest.course_sources(ex) == ["thing_baseline.cu", "thing_reference.cpp"]


# ------------------------------------------------------------------------------ shared

def shared_folder(root: Path, chapter: str, name: str, files=("h",)) -> Path:
    """A folder of shared course code: <name>.h plus the given <name>_*.cpp/.cu files."""
    folder = root / "chapters" / chapter / name
    folder.mkdir(parents=True, exist_ok=True)
    for f in files:
        (folder / (f"{name}.h" if f == "h" else f"{name}_{f}")).write_text("")
    return folder


def with_shared(shared: str) -> str:
    return edit(r"^rdc = false", f'rdc = false\nshared = "{shared}"')


def test_shared_folder_loads_with_its_sources(tmp_path):
    folder = shared_folder(tmp_path, "ch02_memory", "ladder",
                           ("h", "baseline.cu", "reference.cpp", "test.cpp", "bench.cpp"))
    path = write(tmp_path, "ch02_memory", "rung", with_shared("ladder"))
    (path.parent / "rung_test.cpp").write_text("")  # extra cases of this rung
    (path.parent / "rung_probe.cu").write_text("")  # course code of this rung only
    ex = manifest.load_manifest(path)
    assert ex.shared == "ladder" and ex.shared_directory == folder
    assert manifest.shared_sources(ex) == ["ladder_baseline.cu", "ladder_reference.cpp"]
    assert manifest.course_sources(ex) == ["rung_probe.cu"]
    assert manifest.test_sources(ex) == [folder / "ladder_test.cpp", path.parent / "rung_test.cpp"]
    assert manifest.bench_sources(ex) == [folder / "ladder_bench.cpp"]


def test_without_shared_the_exercise_has_its_own_test_and_bench(tmp_path):
    path = write(tmp_path, "ch02_memory", "alone")
    for f in ("alone_test.cpp", "alone_bench.cpp"):
        (path.parent / f).write_text("")
    ex = manifest.load_manifest(path)
    assert ex.shared == "" and ex.shared_directory is None
    assert manifest.shared_sources(ex) == []
    assert manifest.test_sources(ex) == [path.parent / "alone_test.cpp"]
    assert manifest.bench_sources(ex) == [path.parent / "alone_bench.cpp"]


def test_shared_bench_or_the_exercise_bench(tmp_path):
    """A shared folder without a benchmark leaves it to each exercise."""
    shared_folder(tmp_path, "ch02_memory", "ladder", ("h", "test.cpp"))
    path = write(tmp_path, "ch02_memory", "rung", with_shared("ladder"))
    (path.parent / "rung_bench.cpp").write_text("")
    ex = manifest.load_manifest(path)
    assert manifest.bench_sources(ex) == [path.parent / "rung_bench.cpp"]


def shared_error(tmp_path, shared: str, words: str) -> None:
    path = write(tmp_path, "ch02_memory", "rung", with_shared(shared))
    with pytest.raises(ManifestError) as info:
        manifest.load_manifest(path)
    message = str(info.value)
    assert info.value.field == "exercise.shared", message
    assert str(path) in message and words in message and "\n" not in message


def test_shared_missing_folder(tmp_path):
    shared_error(tmp_path, "ladder", "no folder")


def test_shared_folder_in_another_chapter(tmp_path):
    shared_folder(tmp_path, "ch01_basics", "ladder")
    shared_error(tmp_path, "ladder", "no folder")


def test_shared_missing_header(tmp_path):
    shared_folder(tmp_path, "ch02_memory", "ladder", ("test.cpp",))
    shared_error(tmp_path, "ladder", "no header ladder.h")


def test_shared_names_an_exercise(tmp_path):
    write(tmp_path, "ch02_memory", "other")
    (tmp_path / "chapters" / "ch02_memory" / "other" / "other.h").write_text("")
    shared_error(tmp_path, "other", "is an exercise")


def test_shared_bad_name(tmp_path):
    shared_error(tmp_path, "../ch01_basics/ladder", "lower_snake_case")


def test_shared_and_own_benchmark_conflict(tmp_path):
    shared_folder(tmp_path, "ch02_memory", "ladder", ("h", "bench.cpp"))
    (tmp_path / "chapters" / "ch02_memory" / "rung").mkdir(parents=True)
    (tmp_path / "chapters" / "ch02_memory" / "rung" / "rung_bench.cpp").write_text("")
    shared_error(tmp_path, "ladder", "keep one")


def test_shared_wrong_type(tmp_path):
    path = write(tmp_path, "ch02_memory", "rung", edit(r"^rdc = false", "rdc = false\nshared = 1"))
    with pytest.raises(ManifestError, match="exercise.shared"):
        manifest.load_manifest(path)


def test_shared_folder_is_neither_an_exercise_nor_incomplete(tmp_path):
    shared_folder(tmp_path, "ch02_memory", "ladder", ("h", "test.cpp", "bench.cpp"))
    write(tmp_path, "ch02_memory", "rung_a", with_shared("ladder"))
    write(tmp_path, "ch02_memory", "rung_b", with_shared("ladder"))
    lonely = tmp_path / "chapters" / "ch02_memory" / "lonely"
    lonely.mkdir()
    # A folder of the same name in another chapter is not shared by these manifests.
    elsewhere = shared_folder(tmp_path, "ch03_more", "ladder")
    assert [e.name for e in manifest.discover(tmp_path)] == ["rung_a", "rung_b"]
    assert manifest.incomplete_folders(tmp_path) == [lonely, elsewhere]


def test_incomplete_folders_survives_a_broken_manifest(tmp_path):
    """incomplete_folders runs before discover() reports manifest errors: it must not fail."""
    shared_folder(tmp_path, "ch02_memory", "ladder")
    write(tmp_path, "ch02_memory", "rung", with_shared("ladder"))
    write(tmp_path, "ch02_memory", "broken", VALID + "\nnot = = toml\n")
    assert manifest.incomplete_folders(tmp_path) == []


# ------------------------------------------------------------------------------ proof

PROOF_TECHNIQUE = """
[[technique]]
name = "shuffles"
rule = "uses_shuffle"
points = 10
"""

PROOF_TESTS = """\
// TEST(Commented, Out) is not a suite
const char* filter = "Small/*";  /* a filter in a string opens no comment */
TEST(Plain, Works) {}
TEST_F(Fixture, Works) {}
TEST_P(Sizes, Match) {}
INSTANTIATE_TEST_SUITE_P(Small, Sizes, ::testing::Values(1));
TEST(
    Spread,
    OverLines) {}
"""


def with_proof(proof: str, tests: str | None = PROOF_TESTS) -> tuple[str, str | None]:
    return VALID + PROOF_TECHNIQUE + "\n[proof]\n" + proof, tests


def proof_exercise(tmp_path, text: str, tests: str | None, shared_tests: str | None = None):
    if shared_tests is not None:
        folder = shared_folder(tmp_path, "ch02_memory", "ladder")
        (folder / "ladder_test.cpp").write_text(shared_tests)
        text = text.replace("rdc = false", 'rdc = false\nshared = "ladder"', 1)
    path = write(tmp_path, "ch02_memory", "proven", text)
    if tests is not None:
        (path.parent / "proven_test.cpp").write_text(tests)
    return manifest.load_manifest(path)


def test_proof_loads_with_each_kind_of_evidence(tmp_path):
    text, tests = with_proof(
        'teaches = "a warp reduces with shuffles"\n'
        'shown_by = ["rule:shuffles", "test:Plain.Works", "test:Small/Sizes.Match/*", '
        '"test:Sizes.*", "test:Fixture.Works", "test:Spread.OverLines", "test:*/Sizes.*", '
        '"bench:bandwidth"]\n'
        'unprovable = "which warp does the last step"\n')
    proof = proof_exercise(tmp_path, text, tests).proof
    assert proof.teaches == "a warp reduces with shuffles"
    assert proof.named("rule") == ("shuffles",) and proof.named("bench") == ("bandwidth",)
    assert proof.named("test")[:2] == ("Plain.Works", "Small/Sizes.Match/*")
    assert proof.unprovable == "which warp does the last step"


def test_proof_is_optional(tmp_path):
    assert manifest.load_manifest(write(tmp_path, "ch02_memory", "plain")).proof is None


def test_proof_may_name_nothing_when_it_says_why(tmp_path):
    text, tests = with_proof('teaches = "t"\nshown_by = []\nunprovable = "timing only"\n')
    proof = proof_exercise(tmp_path, text, tests).proof
    assert proof.shown_by == () and proof.unprovable == "timing only"


def test_proof_finds_suites_of_the_shared_tests(tmp_path):
    text, _ = with_proof('teaches = "t"\nshown_by = ["test:Ladder/Rungs.Sum"]\n')
    ex = proof_exercise(tmp_path, text, None,
                        shared_tests="TEST_P(Rungs, Sum) {}\n"
                                     "INSTANTIATE_TEST_SUITE_P(Ladder, Rungs, X);\n")
    assert ex.proof.named("test") == ("Ladder/Rungs.Sum",)


# (the [proof] table, the exercise's test source, words the one-line error must contain)
MALFORMED_PROOF = {
    "not a table": ('proof = 3\n', PROOF_TESTS, "proof", "table"),
    "unknown field": ('teaches = "t"\nshown_by = []\nunprovable = "u"\nby = "me"\n',
                      PROOF_TESTS, "proof.by", "unknown field"),
    "teaches missing": ('shown_by = ["rule:shuffles"]\n', PROOF_TESTS, "proof.teaches",
                        "required"),
    "teaches blank": ('teaches = "  "\nshown_by = ["rule:shuffles"]\n', PROOF_TESTS,
                      "proof.teaches", "what the exercise teaches"),
    "teaches not text": ('teaches = 1\nshown_by = ["rule:shuffles"]\n', PROOF_TESTS,
                         "proof.teaches", "str"),
    "shown_by missing": ('teaches = "t"\n', PROOF_TESTS, "proof.shown_by", "required"),
    "shown_by not a list": ('teaches = "t"\nshown_by = "rule:shuffles"\n', PROOF_TESTS,
                            "proof.shown_by", "list"),
    "empty without reason": ('teaches = "t"\nshown_by = []\n', PROOF_TESTS, "proof.shown_by",
                             "unprovable"),
    "empty with blank reason": ('teaches = "t"\nshown_by = []\nunprovable = " "\n',
                                PROOF_TESTS, "proof.shown_by", "unprovable"),
    "unknown prefix": ('teaches = "t"\nshown_by = ["sass:SHFL"]\n', PROOF_TESTS,
                       "proof.shown_by", "rule:<technique>"),
    "no prefix": ('teaches = "t"\nshown_by = ["shuffles"]\n', PROOF_TESTS, "proof.shown_by",
                  "rule:<technique>"),
    "empty target": ('teaches = "t"\nshown_by = ["rule:"]\n', PROOF_TESTS, "proof.shown_by",
                     "rule:<technique>"),
    "unknown rule": ('teaches = "t"\nshown_by = ["rule:uses_shuffle"]\n', PROOF_TESTS,
                     "proof.shown_by", "no [[technique]] named 'uses_shuffle'"),
    "unknown bench": ('teaches = "t"\nshown_by = ["bench:copy"]\n', PROOF_TESTS,
                      "proof.shown_by", "no [[performance]] named 'copy'"),
    "unknown suite": ('teaches = "t"\nshown_by = ["test:Missing.Works"]\n', PROOF_TESTS,
                      "proof.shown_by", "no test suite 'Missing'"),
    "commented-out suite": ('teaches = "t"\nshown_by = ["test:Commented.Out"]\n', PROOF_TESTS,
                            "proof.shown_by", "no test suite 'Commented'"),
    "unknown instantiation": ('teaches = "t"\nshown_by = ["test:Large/Sizes.Match"]\n',
                              PROOF_TESTS, "proof.shown_by", "no test suite 'Large/Sizes'"),
    "no test source": ('teaches = "t"\nshown_by = ["test:Plain.Works"]\n', None,
                       "proof.shown_by", "no test suite 'Plain'"),
    "test without case": ('teaches = "t"\nshown_by = ["test:Plain"]\n', PROOF_TESTS,
                          "proof.shown_by", "Suite.Case"),
    "test with two patterns": ('teaches = "t"\nshown_by = ["test:Plain.Works:Fixture.*"]\n',
                               PROOF_TESTS, "proof.shown_by", "one per entry"),
    "negative test filter": ('teaches = "t"\nshown_by = ["test:-Plain.Works"]\n', PROOF_TESTS,
                             "proof.shown_by", "one per entry"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_PROOF))
def test_malformed_proof_names_file_and_field(tmp_path, case):
    proof, tests, field, words = MALFORMED_PROOF[case]
    # A top-level key must come before the first table, or TOML puts it in that table.
    text = (proof + VALID + PROOF_TECHNIQUE) if case == "not a table" else with_proof(proof)[0]
    with pytest.raises(ManifestError) as info:
        proof_exercise(tmp_path, text, tests)
    message = str(info.value)
    assert info.value.field == field, message
    assert f"proven.toml: {field}: " in message and "\n" not in message
    assert words.lower() in message.lower(), message


def test_exercises_whose_tests_check_for_leaks_keep_their_cases_in_one_process():
    """A leak check reads the device's free memory, which a sibling process (the cases split
    over processes for a re-grade) changes: every exercise whose tests check for leaks says
    one_process, and only those."""
    root = Path(__file__).resolve().parent.parent
    for ex in manifest.discover(root):
        tests = (root / "chapters" / ex.chapter / ex.name).glob("*_test.cpp")
        checks_leaks = any("nothing_leaked" in t.read_text() for t in tests)
        assert ex.tests_one_process == checks_leaks, ex.name


def test_one_process_flag(tmp_path):
    one = VALID.replace("[correctness]\n", "[correctness]\none_process = true\n")
    assert manifest.load_manifest(write(tmp_path, "ch01_a", "split", one)).tests_one_process
    assert not manifest.load_manifest(write(tmp_path, "ch01_a", "whole")).tests_one_process
