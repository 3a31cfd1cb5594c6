"""Every fixture's expect.toml is well-formed and names real exercises (no GPU needed); the
checker that test_fixtures_gpu.py applies to reports works as specified."""

from __future__ import annotations

import re

import pytest

import fixture_expect
import fixture_files
from grader import manifest
from helpers import FIXTURES, ROOT, needs_solutions

pytestmark = needs_solutions
KNOWN = {e.name for e in manifest.discover(ROOT)}
ALL_FIXTURES = sorted(p.parent for p in FIXTURES.glob("*/expect.toml"))


@pytest.mark.parametrize("directory", ALL_FIXTURES, ids=lambda p: p.name)
def test_expect_toml_is_well_formed(directory):
    assert fixture_expect.problems(directory, KNOWN) == []


@pytest.mark.parametrize("directory", ALL_FIXTURES, ids=lambda p: p.name)
def test_fixture_holds_a_chapter_folder(directory):
    chapters = [p for p in directory.iterdir() if p.is_dir()]
    assert chapters, f"{directory.name} has no chapter folder with the submitted files"
    for chapter in chapters:
        assert manifest.CHAPTER_PATTERN.match(chapter.name), chapter


def _powers_of_two(source: str) -> list[int]:
    return [int(k) for k in re.findall(r"\b1 << (\d+)\b", source)]


def test_fixtures_that_cheat_at_the_benchmarks_size_still_see_it():
    """A fixture that behaves in the tests and cheats only above a size (n >= 1 << K) tests
    nothing once the benchmark shrinks below 2^K: the two chapter 01 fixtures earned full marks
    on the GPU after vector_add's benchmark went from 2^27 to 2^26 elements. Every such
    threshold must lie at or below the size its benchmark runs. (Above the tests' sizes too,
    but a test's powers of two are values as often as sizes: a fixture that cheats inside the
    tests fails them on the GPU, which its expected full correctness catches.)"""
    exercises = {e.name: e for e in manifest.discover(ROOT)}
    gates = 0
    for directory in ALL_FIXTURES:
        for rel, content in fixture_files.files(directory).items():
            if not rel.endswith(".cu") or isinstance(content, fixture_files.Link):
                continue
            for k in re.findall(r"\bn\s*(?:>=|<)\s*\(1 << (\d+)\)", content.decode()):
                ex = exercises[rel.rsplit("/", 1)[-1][:-len(".cu")]]
                bench = max(_powers_of_two("".join(f.read_text() for f in _bench_code(ex))))
                assert int(k) <= bench, (f"{directory.name}/{rel}: cheats from 1 << {k}, "
                                         f"but the benchmark runs 1 << {bench}")
                gates += 1
    assert gates >= 3  # vector_add twice, reduce_v8 once


def _bench_code(ex) -> list:
    """The benchmark's source, and where it has a shared folder that folder's course code,
    where a ladder keeps its benchmark's sizes (reduce_ladder_measure.h)."""
    shared = sorted(f for f in ex.shared_directory.iterdir()
                    if f.suffix in (".h", ".cpp", ".cu") and not f.stem.endswith("_test")) \
        if ex.shared else []
    return manifest.bench_sources(ex) + shared


def write(tmp_path, text):
    d = tmp_path / "fx"
    d.mkdir(exist_ok=True)
    (d / "expect.toml").write_text(text)
    return d


@pytest.mark.parametrize("text, fragment", [
    ('[exercises.vector_add]\nstatus = ["partial"]\n', "description"),
    ('description = "d"\n', "at least one table"),
    ('description = "d"\n[exercises.nope]\nstatus = ["passed"]\n', "no such exercise"),
    ('description = "d"\n[exercises.vector_add]\nstatus = "passed"\n', ".status"),
    ('description = "d"\n[exercises.vector_add]\nstatus = ["great"]\n', ".status"),
    ('description = "d"\n[exercises.vector_add]\nstatus = []\n', ".status"),
    ('description = "d"\n[exercises.vector_add]\nstatus = ["passed"]\ncorrectness = "most"\n',
     ".correctness"),
    ('description = "d"\n[exercises.vector_add]\nstatus = ["passed"]\nperformance = "some"\n',
     ".performance"),
    ('description = "d"\n[exercises.vector_add]\nstatus = ["passed"]\nmessages = "x"\n',
     ".messages"),
    ('description = "d"\n[exercises.vector_add]\nstatus = ["passed"]\nstatuss = 1\n',
     "unknown keys"),
    ('description = "d"\nexercise = 1\n', "unknown keys"),
    ('description = = "d"\n', "not valid TOML"),
])
def test_problems_are_found(tmp_path, text, fragment):
    found = fixture_expect.problems(write(tmp_path, text), {"vector_add"})
    assert any(fragment in p for p in found), found


def test_a_good_expect_toml(tmp_path):
    d = write(tmp_path, 'description = "d"\n[exercises.vector_add]\nstatus = ["partial"]\n'
                        'correctness = "full"\nperformance = "not_full"\nmessages = ["x"]\n')
    assert fixture_expect.problems(d, {"vector_add"}) == []


def exercise(status="partial", tests=(60, 60), bench=(20, 40), message="bandwidth: 0.55x"):
    stages = [{"name": "build", "points": 0, "max_points": 0}]
    if tests:
        stages.append({"name": "tests", "points": tests[0], "max_points": tests[1]})
    if bench:
        stages.append({"name": "benchmark", "points": bench[0], "max_points": bench[1],
                       "message": message})
    return {"name": "vector_add", "status": status, "message": message, "stages": stages}


@pytest.mark.parametrize("spec, ex, ok", [
    ({"status": ["partial"], "correctness": "full", "performance": "not_full"}, exercise(), True),
    ({"status": ["passed"]}, exercise(), False),
    ({"status": ["partial"], "correctness": "some"}, exercise(), False),
    ({"status": ["partial"], "correctness": "some"}, exercise(tests=(30, 60)), True),
    ({"status": ["partial"], "correctness": "none"}, exercise(tests=(0, 60)), True),
    ({"status": ["compile_error"], "correctness": "none", "performance": "none"},
     exercise("compile_error", tests=None, bench=None), True),
    ({"status": ["compile_error"], "correctness": "full"},
     exercise("compile_error", tests=None, bench=None), False),
    ({"status": ["partial"], "performance": "full"}, exercise(), False),
    ({"status": ["partial"], "performance": "full"}, exercise(bench=(40, 40)), True),
    ({"status": ["partial"], "performance": "none"}, exercise(bench=(0, 40)), True),
    ({"status": ["partial"], "performance": "not_full"}, exercise(bench=(40, 40)), False),
    ({"status": ["partial"], "messages": ["BANDWIDTH: 0.55X"]}, exercise(), True),
    ({"status": ["partial"], "messages": ["missing words"]}, exercise(), False),
    ({"status": ["partial"], "messages": ['say "hi"']}, exercise(message='we say "hi"\n'), True),
])
def test_mismatches(spec, ex, ok):
    assert (fixture_expect.mismatches(spec, ex) == []) == ok


def test_course_fixtures_selection(monkeypatch):
    monkeypatch.setenv("COURSE_FIXTURES", "none")
    assert fixture_expect.fixture_dirs() == []
    monkeypatch.setenv("COURSE_FIXTURES", "all")
    assert fixture_expect.fixture_dirs() == ALL_FIXTURES
    assert len(ALL_FIXTURES) >= 2
    # The order given is the order graded (the GPU check puts the most telling ones first).
    first, last = ALL_FIXTURES[0], ALL_FIXTURES[-1]
    monkeypatch.setenv("COURSE_FIXTURES", f"{last.name} {first.name},{last.name}")
    assert fixture_expect.fixture_dirs() == [last, first]
    monkeypatch.setenv("COURSE_FIXTURES", f"{first.name},not-a-fixture")
    with pytest.raises(ValueError, match="not-a-fixture"):
        fixture_expect.fixture_dirs()
