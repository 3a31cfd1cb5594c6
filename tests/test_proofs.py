"""Every exercise of chapters 02-07 says, in its manifest's [proof], what technique it teaches
and which rules, tests and measurements fail a submission that gets right results without it.
The manifest module checks that each piece of evidence exists (tests/test_manifest.py); this
file checks that no exercise goes without."""

from __future__ import annotations

import pytest

from grader import manifest
from helpers import ROOT

PROVEN_CHAPTERS = ("ch02", "ch03", "ch04", "ch05", "ch06", "ch07")
EXERCISES = [ex for ex in manifest.discover(ROOT) if ex.chapter_number in PROVEN_CHAPTERS]


def test_the_proven_chapters_have_exercises():
    assert {ex.chapter_number for ex in EXERCISES} == set(PROVEN_CHAPTERS)


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda ex: ex.key)
def test_exercise_proves_its_technique(ex):
    assert ex.proof is not None, f"{ex.manifest}: no [proof] table"


@pytest.mark.parametrize("ex", [ex for ex in EXERCISES
                                if any(t.voids == "all" for t in ex.technique)],
                         ids=lambda ex: ex.key)
def test_a_rule_that_voids_everything_is_part_of_the_proof(ex):
    """A rule that costs every point is there because it is what the exercise teaches."""
    if ex.proof is None:
        pytest.fail(f"{ex.manifest}: no [proof] table")
    left_out = {t.name for t in ex.technique if t.voids == "all"} - set(ex.proof.named("rule"))
    assert not left_out, f"{ex.manifest}: [proof] shown_by leaves out {sorted(left_out)}"
