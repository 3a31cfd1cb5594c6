"""The student's workspace: made from the skeletons, never overwritten, untouched when the
skeletons are regenerated; and skeletons edited by hand are not silently replaced.

Each test works on a copy of the course (grader, chapters, solutions, skeletons) in a temporary
folder, so the repository's own files are never changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader import template
from helpers import ROOT, TEMPLATE, assert_one_line_error, run_cli

EXERCISE = "ch01_programming_model/vector_add.cu"


@pytest.fixture
def course(tmp_path) -> Path:
    if TEMPLATE:
        pytest.skip(template.NO_SOLUTIONS)
    copy = tmp_path / "course"
    for folder in ("grader", "chapters", "solutions", "skeletons"):
        shutil.copytree(ROOT / folder, copy / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def skeleton_files(course: Path) -> dict[str, str]:
    root = course / "skeletons"
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def test_init_copies_every_skeleton_and_then_never_overwrites(course):
    first = run_cli("init", cwd=course)
    assert first.returncode == 0, first.stderr
    assert "created workspace/" in first.stderr
    expected = skeleton_files(course)
    for rel, text in expected.items():
        assert (course / "workspace" / rel).read_text() == text, rel

    mine = course / "workspace" / EXERCISE
    mine.write_text(mine.read_text() + "\n// my work\n")
    (course / "workspace" / "ch01_programming_model" / "thread_indexing.cu").unlink()
    again = run_cli("init", cwd=course)
    assert again.returncode == 0, again.stderr
    assert "added 1 new files" in again.stderr and "thread_indexing.cu" in again.stderr
    assert mine.read_text().endswith("// my work\n")

    nothing = run_cli("init", cwd=course)
    assert nothing.returncode == 0 and "nothing copied" in nothing.stderr


def test_regenerating_skeletons_keeps_the_workspace_edit(course):
    assert run_cli("init", cwd=course).returncode == 0
    mine = course / "workspace" / EXERCISE
    edited = mine.read_text().replace("// TODO:", "// DONE (my kernel):", 1)
    assert edited != mine.read_text()
    mine.write_text(edited)

    # An author changes the solution; regenerating updates the skeleton, not the workspace.
    solution = course / "solutions" / EXERCISE
    solution.write_text("// course note added by the author\n" + solution.read_text())
    regenerate = run_cli("skeletons", cwd=course)
    assert regenerate.returncode == 0, regenerate.stderr
    assert f"wrote skeletons/{EXERCISE}" in regenerate.stdout
    assert (course / "skeletons" / EXERCISE).read_text().startswith("// course note")
    assert mine.read_text() == edited

    # The drift check looks at skeletons/ only: a student's edits do not make it fail.
    check = run_cli("skeletons", "--check", cwd=course)
    assert check.returncode == 0, check.stdout + check.stderr


def test_skeletons_refuses_to_replace_a_hand_edited_skeleton(course):
    skeleton = course / "skeletons" / EXERCISE
    hand_edit = skeleton.read_text() + "\n// a student's work, typed into skeletons/\n"
    skeleton.write_text(hand_edit)
    solution = course / "solutions" / EXERCISE
    solution.write_text(solution.read_text() + "\n// changed solution\n")

    refused = run_cli("skeletons", cwd=course)
    assert refused.returncode == 2
    assert_one_line_error(refused.stderr, f"skeletons/{EXERCISE}", "--force")
    assert skeleton.read_text() == hand_edit
    # Nothing else was written either: the refusal is all or nothing.
    assert run_cli("skeletons", "--check", cwd=course).returncode == 1

    forced = run_cli("skeletons", "--force", cwd=course)
    assert forced.returncode == 0, forced.stderr
    assert skeleton.read_text().endswith("// changed solution\n")
    assert run_cli("skeletons", "--check", cwd=course).returncode == 0


def test_an_untouched_skeleton_is_regenerated_without_force(course):
    solution = course / "solutions" / EXERCISE
    solution.write_text(solution.read_text() + "\n// changed solution\n")
    result = run_cli("skeletons", cwd=course)
    assert result.returncode == 0, result.stderr
    assert (course / "skeletons" / EXERCISE).read_text().endswith("// changed solution\n")


def test_grade_without_a_directory_makes_the_workspace_first(course):
    # An unknown exercise stops the grade before anything is built, on any machine.
    result = run_cli("grade", "-e", "no_such_exercise", cwd=course)
    assert result.returncode == 2
    assert "created workspace/" in result.stderr
    assert (course / "workspace" / EXERCISE).is_file()
    assert "unknown exercise" in result.stderr.splitlines()[-1]


def test_list_points_at_the_workspace():
    result = run_cli("list")
    assert result.returncode == 0
    assert f"workspace/{EXERCISE}" in result.stdout


def test_workspace_is_ignored_by_git():
    # except in a student template, which is the student's own repository: there git tracks it
    ignore = (ROOT / ".gitignore").read_text().splitlines()
    assert ("/workspace/" in ignore) != TEMPLATE
