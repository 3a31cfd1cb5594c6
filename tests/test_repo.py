"""The course itself: every manifest loads, every exercise's files exist (the Meson plan has
tests/test_meson_plan.py)."""

from __future__ import annotations

import re

import pytest

from grader import manifest
from helpers import ROOT, needs_solutions

EXERCISES = manifest.discover(ROOT)


def test_there_are_exercises():
    assert EXERCISES
    assert "vector_add" in {e.name for e in EXERCISES}


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.key)
def test_exercise_files(ex):
    folder = ex.directory
    assert folder == ROOT / "chapters" / ex.chapter / ex.name
    assert (folder / f"{ex.name}.h").is_file(), f"{ex.name}.h missing"
    # Tests and benchmark: the exercise's own, or its shared folder's.
    assert manifest.test_sources(ex), f"{ex.name}_test.cpp missing"
    assert manifest.bench_sources(ex), f"{ex.name}_bench.cpp missing"
    for f in ex.files:
        assert (ROOT / "skeletons" / ex.chapter / f).is_file(), \
            f"skeletons/{ex.chapter}/{f} missing"
    assert ex.max_points > 0
    assert ex.correctness_points > 0


@needs_solutions
@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.key)
def test_solution_files(ex):
    for f in ex.files:
        assert (ROOT / "solutions" / ex.chapter / f).is_file(), \
            f"solutions/{ex.chapter}/{f} missing"


@pytest.mark.parametrize("ex", [e for e in EXERCISES if e.performance], ids=lambda e: e.key)
def test_performance_criteria(ex):
    for perf in ex.performance:
        assert 0 <= perf.zero_at < perf.full_at
        assert perf.measure != perf.baseline


def test_manifests_round_trip_through_load():
    for ex in manifest.discover(ROOT):
        assert manifest.load_manifest(ex.manifest) == ex


def test_ladders_share_their_course_code():
    """The reduction and matrix-product rungs keep only their header and manifest: tests,
    benchmark and course sources live in the ladder's shared folder."""
    ladders = {"reduce_ladder": [e for e in EXERCISES if e.name.startswith("reduce_v")],
               "matmul_ladder": [e for e in EXERCISES if e.name.startswith("matmul_v")]}
    for shared, rungs in ladders.items():
        assert rungs
        for ex in rungs:
            assert ex.shared == shared, ex.key
            assert manifest.bench_sources(ex) == [ex.shared_directory / f"{shared}_bench.cpp"]
            assert manifest.test_sources(ex)[0] == ex.shared_directory / f"{shared}_test.cpp"
            # Its baselines are shared ceilings, measured once per run without student code.
            assert manifest.ceilings_source(ex) == \
                ex.shared_directory / f"{shared}_ceilings.cpp", ex.key
    shared_folders = {ex.shared_directory for ex in EXERCISES if ex.shared}
    assert not shared_folders & set(manifest.incomplete_folders(ROOT))


def _statements_after(source: str, pattern: str):
    """(statement, the code after it) for each statement of `source` that calls `pattern`."""
    for match in re.finditer(pattern, source):
        end = source.find(";", match.end())
        yield source[match.start():end + 1], source[end + 1:end + 400]


def test_tests_wait_for_their_set_up():
    """cudaMemset and cudaMemcpy from the host may still be running on the legacy stream when
    the call under test starts on a non-blocking stream: on an H200 with other exercises beside
    it, outputs were poisoned after the kernel wrote them and inputs read before they landed.
    A test's set-up goes through course::testing::fill_device_bytes / DeviceBuffer, or is
    followed by wait_for_setup() (or a synchronisation of its own)."""
    waits = ("wait_for_setup()", "fill_device_bytes(", "cudaDeviceSynchronize()",
             "cudaStreamSynchronize(")
    offenders = []
    for test in sorted((ROOT / "chapters").rglob("*_test.cpp")):
        source = test.read_text()
        for statement, after in _statements_after(source, r"\bcudaMemset\("):
            offenders.append(f"{test.name}: {statement.strip()} (use fill_device_bytes)")
        for statement, after in _statements_after(source, r"\bcudaMemcpy(2D)?\("):
            if "HostToDevice" not in statement:
                continue  # into host memory: the call returns once the copy is done
            next_statement = after.split(";")[0]
            if not any(w in next_statement for w in waits):
                offenders.append(f"{test.name}: {' '.join(statement.split())[:80]} "
                                 "not followed by wait_for_setup()")
    assert not offenders, "\n".join(offenders)
