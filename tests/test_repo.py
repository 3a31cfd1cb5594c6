"""The course itself: every manifest loads, every exercise's files exist, the Meson plan."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

from grader import manifest, meson_plan
from helpers import ROOT

EXERCISES = manifest.discover(ROOT)


def test_there_are_exercises():
    assert EXERCISES
    assert "vector_add" in {e.name for e in EXERCISES}


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.key)
def test_exercise_files(ex):
    folder = ex.directory
    assert folder == ROOT / "chapters" / ex.chapter / ex.name
    for suffix in (".h", "_test.cpp", "_bench.cpp"):
        assert (folder / f"{ex.name}{suffix}").is_file(), f"{ex.name}{suffix} missing"
    for tree in ("solutions", "skeletons"):
        for f in ex.files:
            assert (ROOT / tree / ex.chapter / f).is_file(), f"{tree}/{ex.chapter}/{f} missing"
    assert ex.max_points > 0
    assert ex.correctness_points > 0


@pytest.mark.parametrize("ex", [e for e in EXERCISES if e.performance], ids=lambda e: e.key)
def test_performance_criteria(ex):
    for perf in ex.performance:
        assert 0 <= perf.zero_at < perf.full_at
        assert perf.measure != perf.baseline


def test_manifests_round_trip_through_load():
    for ex in manifest.discover(ROOT):
        assert manifest.load_manifest(ex.manifest) == ex


def test_meson_plan_lists_every_exercise():
    out = io.StringIO()
    with redirect_stdout(out):
        assert meson_plan.main(str(ROOT)) == 0
    lines = out.getvalue().splitlines()
    exercises = manifest.discover(ROOT)
    assert len(lines) == len(exercises)
    for line, ex in zip(lines, exercises):
        fields = line.split("|")
        assert len(fields) == 8
        assert fields[0] == ex.name and fields[1] == ex.chapter
        assert fields[3] == ",".join(ex.files)
