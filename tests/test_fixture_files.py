"""Fixtures as the solution plus a patch (tests/fixture_files.py): every fixture materialises
(so a solution change that a patch no longer fits fails CI here, not on a GPU), a stale patch
is reported naming the fixture, the file and the hunk, and the commands that write and grade
fixtures work. No GPU, no compiler."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

import fixture_files as ff
from helpers import FIXTURES, PYTHON, ROOT, TESTS, needs_solutions

ALL_FIXTURES = sorted(p.parent for p in FIXTURES.glob("*/expect.toml"))
SOLUTION = "".join(f"line {i}\n" for i in range(1, 31))
CHANGED = SOLUTION.replace("line 12\n", "line twelve\n").replace("line 25\n", "")


@needs_solutions
@pytest.mark.parametrize("directory", ALL_FIXTURES, ids=lambda p: p.name)
def test_fixture_materialises(directory, tmp_path):
    into = ff.materialise(directory, tmp_path / directory.name)
    made = sorted(p.relative_to(into).as_posix() for p in into.rglob("*")
                  if p.is_file() or p.is_symlink())
    assert made and not [m for m in made if m.endswith(ff.PATCH) or m == ff.EXPECT]
    for patch in directory.rglob(f"*{ff.PATCH}"):
        rel = patch.relative_to(directory).as_posix()[:-len(ff.PATCH)]
        assert rel in made and (ROOT / "solutions" / rel).is_file()
        assert patch.stat().st_size < (into / rel).stat().st_size, \
            f"{rel}: a patch is kept only where it is smaller than the file it makes"
    for plain in directory.rglob("*.cu"):
        assert (into / plain.relative_to(directory)).read_bytes() == plain.read_bytes()
    assert ff.submission(directory, tmp_path / "scratch") == (
        tmp_path / "scratch" / directory.name if ff.has_patches(directory) else directory)


@needs_solutions
def test_check_command_applies_every_patch():
    result = subprocess.run([PYTHON, str(TESTS / "fixture_files.py"), "check"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert any(ff.has_patches(d) for d in ALL_FIXTURES)
    usage = subprocess.run([PYTHON, str(TESTS / "fixture_files.py"), "patch"],
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "materialise NAME" in usage.stderr


def make_fixture(tmp_path, patch: str, name="fx_stale"):
    solutions = tmp_path / "solutions"
    (solutions / "ch01_a").mkdir(parents=True)
    (solutions / "ch01_a" / "one.cu").write_text(SOLUTION)
    (solutions / "ch01_a" / "two.cu").write_text("two\n")
    fixture = tmp_path / "fixtures" / name
    (fixture / "ch01_a").mkdir(parents=True)
    (fixture / "expect.toml").write_text('description = "d"\n')
    (fixture / "ch01_a" / "one.cu.patch").write_text(patch)
    (fixture / "ch01_a" / "own.cu").write_text("written for the fixture\n")
    (fixture / "ch01_a" / "two.cu.patch").write_text("")  # the solution unchanged
    return fixture, solutions


def test_a_patch_makes_the_fixture_file(tmp_path):
    fixture, solutions = make_fixture(tmp_path, ff.make_patch(SOLUTION, CHANGED, "ch01_a/one.cu"))
    assert ff.files(fixture, solutions) == {"ch01_a/one.cu": CHANGED.encode(),
                                            "ch01_a/own.cu": b"written for the fixture\n",
                                            "ch01_a/two.cu": b"two\n"}
    # A hunk found elsewhere (lines added above it) still applies, to the same lines.
    (solutions / "ch01_a" / "one.cu").write_text("new\n" * 5 + SOLUTION)
    assert ff.files(fixture, solutions)["ch01_a/one.cu"] == ("new\n" * 5 + CHANGED).encode()


def test_a_stale_patch_names_the_fixture_the_file_and_the_hunk(tmp_path):
    fixture, solutions = make_fixture(tmp_path, ff.make_patch(SOLUTION, CHANGED, "ch01_a/one.cu"))
    (solutions / "ch01_a" / "one.cu").write_text(SOLUTION.replace("line 24\n", "line 24 (new)\n"))
    with pytest.raises(ff.FixtureError) as caught:
        ff.files(fixture, solutions)
    message = str(caught.value)
    for fragment in ("fixture fx_stale", "ch01_a/one.cu.patch", "hunk 2 (@@ -22,7 +22,6 @@)",
                     "solutions/ch01_a/one.cu", "line 24 there is 'line 24 (new)'",
                     "expects 'line 24'"):
        assert fragment in message, message
    assert ff.check(fixture.parent, solutions) == [message]
    # Nothing is written when a patch fails; the command line's materialise keeps going.
    with pytest.raises(ff.FixtureError):
        ff.materialise(fixture, tmp_path / "out", solutions)
    assert not (tmp_path / "out").exists()
    made = ff.materialise(fixture, tmp_path / "edit", solutions, keep_going=True)
    assert (made / "ch01_a" / "one.cu").read_text() == SOLUTION.replace("line 24\n",
                                                                         "line 24 (new)\n")
    assert (made / "ch01_a" / "one.cu.rej").read_bytes() == \
        (fixture / "ch01_a" / "one.cu.patch").read_bytes()


@pytest.mark.parametrize("patch, fragment", [
    ("@@ -1,1 +1,1 @@\n-line 1\n+one\n", "starts '--- solutions/ch01_a/one.cu'"),
    ("--- solutions/ch01_a/one.cu\n+++ ch01_a/one.cu\nline 1\n", "should start a hunk"),
    ("--- solutions/ch01_a/one.cu\n+++ ch01_a/one.cu\n@@ -1,2 +1,2 @@\n-line 1\n+one\n",
     "header says 2 and 2"),
    ("--- solutions/ch01_a/one.cu\n+++ ch01_a/one.cu\n@@ -1,1 +1,1 @@\n*line 1\n+one\n",
     "is not ' ', '-' or '+'"),
    ("--- solutions/ch01_a/one.cu\n+++ ch01_a/one.cu\n@@ -1,1 +1,1 @@\n-line 99\n+one\n",
     "hunk 1 (@@ -1,1 +1,1 @@) does not apply"),
])
def test_a_malformed_patch_is_refused(tmp_path, patch, fragment):
    fixture, solutions = make_fixture(tmp_path, patch)
    with pytest.raises(ff.FixtureError, match="fx_stale: ch01_a/one.cu.patch") as caught:
        ff.files(fixture, solutions)
    assert fragment in str(caught.value)


def test_a_patch_beside_its_file_or_without_a_solution_is_refused(tmp_path):
    fixture, solutions = make_fixture(tmp_path, "")
    (fixture / "ch01_a" / "one.cu").write_text("x\n")
    with pytest.raises(ff.FixtureError, match="ch01_a/one.cu is there too"):
        ff.files(fixture, solutions)
    (fixture / "ch01_a" / "one.cu").unlink()
    (fixture / "ch01_a" / "three.cu.patch").write_text("")
    with pytest.raises(ff.FixtureError, match="no solutions/ch01_a/three.cu"):
        ff.files(fixture, solutions)


def test_patches_round_trip():
    rng = random.Random(30)
    pieces = ["a\n", "b\n", "c\n", "\n", "tail", "  x\n", "\\ y\n", "+z\n", "-w\n"]
    for _ in range(500):
        old, new = ("".join(rng.choice(pieces) for _ in range(rng.randint(0, 15)))
                    for _ in range(2))
        patch = ff.make_patch(old, new, "ch01_a/one.cu")
        assert ff.apply_patch(old, patch, "here", "ch01_a/one.cu") == new, (old, new, patch)
    assert ff.make_patch(SOLUTION, SOLUTION, "ch01_a/one.cu") == ""
    assert ff.NO_NEWLINE in ff.make_patch("a\n", "a\nb", "ch01_a/one.cu")


def test_materialise_writes_only_what_changed_and_removes_the_rest(tmp_path):
    fixture, solutions = make_fixture(tmp_path, ff.make_patch(SOLUTION, CHANGED, "ch01_a/one.cu"))
    into = tmp_path / "scratch" / fixture.name
    assert ff.submission(fixture, tmp_path / "scratch", solutions) == into
    old = into / "ch01_a" / "own.cu"
    os.utime(old, ns=(1, 1))
    (into / "ch01_a" / "one.cu").write_text("edited\n")
    (into / "ch01_a" / "extra.cu").write_text("left over\n")
    (into / "ch09_gone" / "deep").mkdir(parents=True)
    ff.materialise(fixture, into, solutions)
    assert old.stat().st_mtime_ns == 1  # unchanged, not rewritten
    assert (into / "ch01_a" / "one.cu").read_text() == CHANGED
    assert sorted(p.name for p in into.rglob("*")) == ["ch01_a", "one.cu", "own.cu", "two.cu"]
    # A folder that is not a fixture's copy is never emptied.
    (into / "notes.txt").write_text("mine\n")
    with pytest.raises(ff.FixtureError, match="holds more than chapter folders"):
        ff.materialise(fixture, into, solutions)
    assert (into / "notes.txt").is_file()
    # No patch: graded where it is.
    for patch in fixture.rglob(f"*{ff.PATCH}"):
        patch.unlink()
    assert ff.submission(fixture, tmp_path / "scratch", solutions) == fixture


def test_links_are_kept(tmp_path):
    fixture, solutions = make_fixture(tmp_path, "")
    link = fixture / "ch01_a" / "one.cu"
    (fixture / "ch01_a" / "one.cu.patch").unlink()
    link.symlink_to(os.path.relpath(solutions / "ch01_a" / "one.cu", link.parent))
    made = ff.materialise(fixture, tmp_path / "out", solutions)
    assert (made / "ch01_a" / "one.cu").is_symlink()
    assert (made / "ch01_a" / "one.cu").resolve() == (solutions / "ch01_a" / "one.cu").resolve()
    assert ff.write_back(fixture.name, made, fixture.parent, solutions) == []
    assert os.readlink(link).startswith("..")  # the fixture's own link, untouched


def test_a_patch_may_start_from_another_solution_of_the_chapter(tmp_path):
    """One exercise's solution handed in as another's (rung 4 as rung 5): the patch names the
    solution it starts from, write_back finds it, and it follows that solution's changes."""
    fixture, solutions = make_fixture(tmp_path, "")
    other = SOLUTION.replace("line 3\n", "line three\n")
    (solutions / "ch01_a" / "two.cu").write_text(other)
    edited = ff.materialise(fixture, tmp_path / "edit", solutions)
    (edited / "ch01_a" / "one.cu").write_text(other.replace("line 20\n", "line twenty\n"))
    ff.write_back(fixture.name, edited, fixture.parent, solutions)
    patch = (fixture / "ch01_a" / "one.cu.patch").read_text()
    assert patch.startswith("--- solutions/ch01_a/two.cu\n+++ ch01_a/one.cu\n"), patch
    assert patch.count("\n-") == 1, "one line changed from two.cu, not two from one.cu"
    (solutions / "ch01_a" / "two.cu").write_text("new\n" + other)
    assert ff.files(fixture, solutions)["ch01_a/one.cu"] == \
        ("new\n" + other.replace("line 20\n", "line twenty\n")).encode()
    (fixture / "ch01_a" / "one.cu.patch").write_text(patch.replace("solutions/ch01_a/two.cu",
                                                                   "solutions/ch02_b/two.cu"))
    with pytest.raises(ff.FixtureError, match="solutions/ch02_b/two.cu is another chapter's"):
        ff.files(fixture, solutions)


def test_write_back_makes_patches_where_smaller(tmp_path):
    fixture, solutions = make_fixture(tmp_path, "")
    edited = ff.materialise(fixture, tmp_path / "edit", solutions)
    (edited / "ch01_a" / "one.cu").write_text(CHANGED)  # a small change: a patch
    (edited / "ch01_a" / "two.cu").write_text("rewritten\nfrom\nscratch\n")  # a patch is larger
    (edited / "ch01_a" / "own.cu").unlink()
    (edited / "ch01_a" / "new.cu").write_text("new\n")  # no solution: plain
    said = ff.write_back(fixture.name, edited, fixture.parent, solutions)
    assert f"removed {fixture.name}/ch01_a/own.cu" in said
    names = sorted(p.relative_to(fixture).as_posix() for p in fixture.rglob("*") if p.is_file())
    assert names == ["ch01_a/new.cu", "ch01_a/one.cu.patch", "ch01_a/two.cu", "expect.toml"]
    assert ff.files(fixture, solutions) == {
        "ch01_a/new.cu": b"new\n", "ch01_a/one.cu": CHANGED.encode(),
        "ch01_a/two.cu": b"rewritten\nfrom\nscratch\n"}
    assert ff.write_back(fixture.name, edited, fixture.parent, solutions) == []  # idempotent
    with pytest.raises(ff.FixtureError, match="holds more than chapter folders"):
        ff.write_back(fixture.name, tmp_path, fixture.parent, solutions)
    with pytest.raises(ff.FixtureError, match="not a fixture's name"):
        ff.write_back("../up", edited, fixture.parent, solutions)
    # A new fixture: made from the copy, expect.toml still to write.
    said = ff.write_back("fx_new", edited, fixture.parent, solutions)
    assert said[-1].startswith("fx_new/expect.toml is missing")


def test_overlaid_holds_every_solution_file_under_the_fixture_own(tmp_path):
    """One folder grades fixture after fixture: each overlay holds the whole course's files,
    the fixture's own in place of the solutions', and a fixture that reaches outside its
    folder (a link, a '../') is not overlaid."""
    fixture, solutions = make_fixture(tmp_path, ff.make_patch(SOLUTION, CHANGED, "ch01_a/one.cu"))
    (solutions / "ch02_b").mkdir()
    (solutions / "ch02_b" / "three.cu").write_text("three\n")
    into = tmp_path / "worker"
    assert ff.overlaid(fixture, into, solutions) == into
    made = {p.relative_to(into).as_posix(): p.read_bytes() for p in into.rglob("*")
            if p.is_file()}
    assert made == {"ch01_a/one.cu": CHANGED.encode(),
                    "ch01_a/own.cu": b"written for the fixture\n",
                    "ch01_a/two.cu": b"two\n",
                    "ch02_b/three.cu": b"three\n"}
    # The next fixture in the same folder: what the last one added is gone.
    other = tmp_path / "fx_other"
    (other / "ch02_b").mkdir(parents=True)
    (other / "ch02_b" / "three.cu").write_text("mine\n")
    ff.overlaid(other, into, solutions)
    assert (into / "ch02_b" / "three.cu").read_text() == "mine\n"
    assert (into / "ch01_a" / "one.cu").read_text() == SOLUTION
    assert not (into / "ch01_a" / "own.cu").exists()
    (other / "ch02_b" / "three.cu").write_text('#include "../../../secret.h"\n')
    assert ff.overlaid(other, into, solutions) is None
    (other / "ch02_b" / "three.cu").unlink()
    (other / "ch02_b" / "three.cu").symlink_to(solutions / "ch02_b" / "three.cu")
    assert ff.overlaid(other, into, solutions) is None
