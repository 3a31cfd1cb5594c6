"""Shared ceilings (grader/stages/ceilings.py): a ceiling that several exercises' benchmarks
record (--ceilings-elsewhere) is measured once per run by a course-only ceilings program, and
every exercise that recorded it is scored against that one measurement. Stand-in benchmark and
ceilings programs; the C++ side runs on the GPU (scripts/gpu_check.sh)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from fakes import bench_data, fake_bench, fake_ceilings
from grader import manifest, scoring
from grader.stages import benchmark
from grader.stages.ceilings import Ceilings
from helpers import ROOT, vector_add

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

REDUCE_V2 = (ROOT / "chapters" / "ch02_execution_model" / "reduce_v2_neighbored_less_divergence"
             / "reduce_v2_neighbored_less_divergence.toml")


@pytest.fixture
def run_bench(tmp_path):
    """run_bench(grader, ex, ceilings, data) -> the scored benchmark stage of a stand-in bench
    that reports `data`; its arguments are logged to tmp_path/bench-argv.log."""
    count = 0

    def run(g, ex, ceilings, data):
        nonlocal count
        count += 1
        binary = fake_bench(g.options.build_dir / f"bench{count}", data,
                            argv_log=str(tmp_path / "bench-argv.log"))
        stage = benchmark.run(g.options, ex, binary)
        benchmark.ratios(ex, stage, ceilings)
        scoring.score_benchmark(ex, stage)
        return stage

    return run


def calls(log) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def only_keys(log) -> list[str]:
    return [argv[argv.index("--only") + 1] for argv in calls(log)]


def test_a_ceiling_is_measured_once_per_run_and_scores_every_exercise(grader_for, tmp_path,
                                                                      run_bench):
    ex = vector_add()
    g = grader_for(ex)
    log = tmp_path / "ceilings.log"
    fake_ceilings(g.options.build_dir / "course_ceilings", log, {"copy:1000": 1000.0})
    said = []
    ceilings = Ceilings(g.options, said.append)
    first = run_bench(g, ex, ceilings, bench_data(900, 0, baseline_key="copy:1000"))
    second = run_bench(g, dataclasses.replace(ex, name="vector_add_twin"), ceilings,
                       bench_data(500, 0, baseline_key="copy:1000"))
    assert only_keys(log) == ["copy:1000"]  # one program run for both
    # The student sees the phase between the last benchmark and the scores.
    assert len(said) == 1 and said[0].startswith("measured 1 shared ceiling with "
                                                 "course_ceilings ("), said
    assert first.details["ceilings_measured"] == ["copy:1000"]
    assert second.details["ceilings_measured"] == []
    assert first.metrics[0].ratio == pytest.approx(0.9) and first.points == 40
    assert second.metrics[0].ratio == pytest.approx(0.5) and second.points < 40
    baseline = first.details["measurements"][0]
    assert baseline["rate"] == 1000.0 and baseline["measured_by"] == "course_ceilings"
    assert baseline["repeats"] == 10 and baseline["median_ms"] == 1.0
    argv = calls(tmp_path / "bench-argv.log")
    assert len(argv) == 2 and all("--ceilings-elsewhere" in a for a in argv)


def test_each_shape_is_its_own_ceiling(grader_for, tmp_path, run_bench):
    ex = vector_add()
    g = grader_for(ex)
    log = tmp_path / "ceilings.log"
    fake_ceilings(g.options.build_dir / "course_ceilings", log,
                  {"copy:1000": 1000.0, "copy:2000": 2000.0})
    ceilings = Ceilings(g.options)
    small = run_bench(g, ex, ceilings, bench_data(900, 0, baseline_key="copy:1000"))
    large = run_bench(g, ex, ceilings, bench_data(900, 0, baseline_key="copy:2000"))
    again = run_bench(g, ex, ceilings, bench_data(900, 0, baseline_key="copy:1000"))
    assert only_keys(log) == ["copy:1000", "copy:2000"]
    assert [s.metrics[0].ratio for s in (small, large, again)] == \
        pytest.approx([0.9, 0.45, 0.9])


def rung_with_ladder_key(grader_for, tmp_path, run_bench, key):
    """Reduce rung 2's benchmark recording `key` as its baseline, the reduce ladder's ceilings
    program measuring `key`: (its stage, the program's calls)."""
    ex = manifest.load_manifest(REDUCE_V2)
    assert manifest.ceilings_source(ex) is not None  # reduce_ladder_ceilings.cpp
    g = grader_for(ex)
    log = tmp_path / "ceilings.log"
    fake_ceilings(g.options.build_dir / "ch02_execution_model_reduce_ladder_ceilings", log,
                  {key: 100.0})
    data = bench_data(150, 0, measure=ex.performance[0].measure,
                      baseline=ex.performance[0].baseline, baseline_key=key)
    return run_bench(g, ex, Ceilings(g.options), data), calls(log)


def test_a_ladder_key_goes_to_its_own_folders_program(grader_for, tmp_path, run_bench):
    key = "reduce_ladder/course_v1_neighbored_b512:268435456"
    stage, called = rung_with_ladder_key(grader_for, tmp_path, run_bench, key)
    assert [argv[argv.index("--only") + 1] for argv in called] == [key]
    assert stage.metrics[0].ratio == pytest.approx(1.5)


def test_a_key_of_another_folder_is_measured_by_no_program(grader_for, tmp_path, run_bench):
    """A benchmark cannot pick which course program measures its baseline: a key outside the
    copies and the exercise's own shared folder is refused."""
    key = "matmul_ladder/cublas_sgemm:4096x4096x4096"
    stage, called = rung_with_ladder_key(grader_for, tmp_path, run_bench, key)
    assert called == []
    assert stage.status == "error" and stage.points == 0
    assert "no course ceilings program measures" in stage.metrics[0].message


@pytest.mark.parametrize("config, why", [
    ({"missing": True}, "was not built"),
    ({"crash": True}, "without its report"),
    ({"nonce": "0" * 32}, "without its report"),
    ({"rates": {}}, "did not measure copy:1000: no ceiling copy:1000 in this program"),
    ({"rates": {"copy:1000": 0.0}}, "course_ceilings: wrong output"),
    ({"work": 2e9}, "units of work per run"),
    ({"unit": "TFLOP/s"}, "the ceilings program 'TFLOP/s'"),
])
def test_a_ceiling_the_course_could_not_measure_is_an_error_not_the_students(
        grader_for, tmp_path, run_bench, config, why):
    ex = vector_add()
    g = grader_for(ex)
    log = tmp_path / "ceilings.log"
    if not config.pop("missing", False):
        rates = config.pop("rates", {"copy:1000": 1000.0})
        fake_ceilings(g.options.build_dir / "course_ceilings", log, rates, **config)
    stage = run_bench(g, ex, Ceilings(g.options), bench_data(900, 0, baseline_key="copy:1000"))
    assert stage.status == "error" and stage.points == 0
    assert stage.metrics[0].ratio is None
    assert why in stage.metrics[0].message
    assert "baseline copy" in stage.message


def test_a_failed_ceiling_no_criterion_uses_leaves_the_grade_alone(grader_for, tmp_path,
                                                                  run_bench):
    ex = vector_add()
    g = grader_for(ex)
    data = bench_data(900, 1000)  # the graded baseline timed in the process
    data["measurements"].append({"name": "unused", "key": "copy:5", "elsewhere": True,
                                 "unit": "GB/s", "work_per_run": 10.0, "rate": 0.0,
                                 "valid": True, "problem": ""})
    stage = run_bench(g, ex, Ceilings(g.options), data)  # no course_ceilings built
    assert stage.status == "passed" and stage.points == 40
    assert stage.details["measurements"][-1]["valid"] is False
