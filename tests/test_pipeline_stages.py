"""The sanitizer and benchmark stages (the benchmark's ratios scored by grader.scoring), then
Grader.grade_exercise (the build stage included) and Grader.run, with stand-in binaries, a fake
compute-sanitizer and fake meson/ninja (tools.find is monkeypatched)."""

from __future__ import annotations

import dataclasses
import io
import json
import threading
import time

import pytest

from fakes import (bench_data, clean_integrity, fake_bench, fake_gtest,
                   fake_sanitizer, fake_tool)
from grader import model, proc, render, scoring, tools
from grader.errors import GraderError
from grader.model import CaseResult, CaseStatus, ExerciseStatus, StageResult, StageStatus
from grader import manifest
from grader.stages import benchmark, build, technique, sanitizer as sanitizer_stage
from grader.stages import tests as tests_stage
from grader.stages.ceilings import Ceilings
from grader.stages.common import GradeOptions
from helpers import ROOT, vector_add

CASES = ["VectorAddEdge.Empty", "Small/VectorAdd.MatchesReference/n_1",
         "Small/VectorAdd.MatchesReference/n_33", "Large/VectorAdd.MatchesReference/n_65537"]
GPU = model.GpuInfo("Fake GPU", "9.0", "555.55", 80000)


@pytest.fixture
def fake_tools(monkeypatch, tmp_path):
    """Registry name -> path for tools.find; names not registered are 'not found'."""
    found: dict[str, str] = {}
    real_find = tools.find

    def find(name, required_for=""):
        if name in found:
            return found[name]
        if required_for:
            return real_find("definitely-not-a-tool-" + name, required_for)
        return None

    monkeypatch.setattr(tools, "find", find)
    clean_integrity(monkeypatch)
    return found


@pytest.fixture
def sanitizer(fake_tools, tmp_path):
    """sanitizer(**config) installs a fake compute-sanitizer; returns its argv log path."""

    def install(**config):
        log = tmp_path / "sanitizer-argv.log"
        fake_tools["compute-sanitizer"] = str(
            fake_sanitizer(tmp_path / "bin" / "compute-sanitizer", log, **config))
        return log

    return install


# ------------------------------------------------------------------------------ sanitizer

def sanitize(grader_for, cases, ex=None):
    ex = ex or vector_add(sanitizer_tools=("memcheck", "racecheck"))
    g = grader_for(ex)
    binary = fake_gtest(g.options.build_dir / "vector_add_test", cases)
    return sanitizer_stage.run(g.options, ex, binary)


def test_sanitizer_clean(grader_for, sanitizer):
    log = sanitizer()
    stage = sanitize(grader_for, CASES)
    assert stage.status == "passed"
    assert stage.message == "memcheck: clean; racecheck: clean"
    calls = [json.loads(l) for l in log.read_text().splitlines()]
    assert [c[1] for c in calls] == ["memcheck", "racecheck"]
    for call in calls:
        assert call[:6] == ["--tool", call[1], "--error-exitcode", "86", "--print-limit", "20"]
        assert call[-1] == "--gtest_filter=Small/*:VectorAddEdge.*-*RunsOnTheGivenStream*"


def test_a_tool_with_a_filter_of_its_own_runs_that_filter(grader_for, sanitizer):
    log = sanitizer()
    ex = vector_add(sanitizer_tools=("memcheck", "racecheck", "synccheck"),
                    sanitizer_tool_filters=(("racecheck", "Small/*n_1*-*RunsOnTheGivenStream*"),))
    stage = sanitize(grader_for, CASES, ex)
    assert stage.status == "passed"
    filters = {c[1]: c[-1] for c in map(json.loads, log.read_text().splitlines())}
    assert filters == {"memcheck": f"--gtest_filter={ex.sanitizer_filter}",
                       "racecheck": "--gtest_filter=Small/*n_1*-*RunsOnTheGivenStream*",
                       "synccheck": f"--gtest_filter={ex.sanitizer_filter}"}


def test_a_tool_filter_that_selects_nothing_is_a_course_error(grader_for, sanitizer):
    sanitizer()
    ex = vector_add(sanitizer_tools=("memcheck", "racecheck"),
                    sanitizer_tool_filters=(("racecheck", "NoSuchSuite.*"),))
    stage = sanitize(grader_for, CASES, ex)
    assert stage.status == "error"
    assert stage.message.startswith("racecheck's sanitizer filter 'NoSuchSuite.*' selects no")


def test_sanitizer_errors_with_failing_cases(grader_for, sanitizer):
    sanitizer(errors={"memcheck": 2})
    cases = [CASES[0], {"name": CASES[1], "status_under_sanitizer": "failed"}, CASES[2]]
    stage = sanitize(grader_for, cases)
    assert stage.status == "failed"
    assert stage.message == "memcheck found 2 errors"
    assert "Invalid __global__ write" in stage.output
    assert all(line.startswith("=========") for line in stage.output.splitlines())


def test_sanitizer_errors_while_cases_pass(grader_for, sanitizer):
    sanitizer(errors={"racecheck": 3})
    stage = sanitize(grader_for, CASES)
    assert stage.status == "failed"
    assert "racecheck found 3 errors" in stage.message


@pytest.mark.parametrize("at_once", [1, 2])
def test_sanitizer_tools_judged_in_the_manifests_order(grader_for, sanitizer, at_once):
    """One tool after another stops at the first finding; all at once (cores to spare) runs
    every tool but says the same: the first finding, in the manifest's order."""
    log = sanitizer(errors={"memcheck": 2, "racecheck": 1})
    ex = vector_add(sanitizer_tools=("memcheck", "racecheck"))
    g = grader_for(ex)
    g.options.sanitizer_tools_at_once = at_once
    binary = fake_gtest(g.options.build_dir / "vector_add_test", CASES)
    stage = sanitizer_stage.run(g.options, ex, binary)
    assert stage.status == "failed" and stage.message == "memcheck found 2 errors"
    tools_run = sorted(json.loads(l)[1] for l in log.read_text().splitlines())
    assert tools_run == (["memcheck"] if at_once == 1 else ["memcheck", "racecheck"])


def test_sanitizer_tools_at_once_clean(grader_for, sanitizer):
    log = sanitizer()
    ex = vector_add(sanitizer_tools=("memcheck", "racecheck", "synccheck"))
    g = grader_for(ex)
    g.options.sanitizer_tools_at_once = 3
    binary = fake_gtest(g.options.build_dir / "vector_add_test", CASES)
    stage = sanitizer_stage.run(g.options, ex, binary)
    assert stage.status == "passed"
    assert stage.message == "memcheck: clean; racecheck: clean; synccheck: clean"
    assert len(log.read_text().splitlines()) == 3


def test_sanitizer_leak_check_only_where_the_manifest_asks(grader_for, sanitizer):
    log = sanitizer(leaked_bytes=4096)
    stage = sanitize(grader_for, CASES, vector_add())
    assert stage.status == "passed"  # no --leak-check: the leak is not looked for
    assert "--leak-check" not in log.read_text()

    stage = sanitize(grader_for, CASES, vector_add(sanitizer_leak_check=True))
    assert stage.status == "failed"
    assert stage.message == ("memcheck found 1 error (4096 bytes of device memory never freed, "
                             "in 1 allocations)")
    last = json.loads(log.read_text().splitlines()[-1])
    assert last[:4] == ["--tool", "memcheck", "--leak-check", "full"]


def test_sanitizer_crash_under_the_tool(grader_for, sanitizer):
    sanitizer()
    cases = [CASES[0], {"name": CASES[1], "action_under_sanitizer": "segv"}, CASES[2]]
    stage = sanitize(grader_for, cases)
    assert stage.status == "failed"
    assert "memcheck: tests failed or crashed under the sanitizer" in stage.message
    assert CASES[1] in stage.message


def test_sanitizer_time_out(grader_for, sanitizer):
    sanitizer()
    ex = vector_add(sanitizer_timeout_s=1.0)
    started = time.monotonic()
    stage = sanitize(grader_for, [{"name": CASES[1], "action_under_sanitizer": "hang"}], ex)
    assert time.monotonic() - started < 10
    assert stage.status == "failed"
    assert stage.message.startswith("memcheck: timed out after")
    assert CASES[1] in stage.message


def test_sanitizer_not_installed(grader_for, fake_tools):
    stage = sanitize(grader_for, CASES)
    assert stage.status == "error"  # not "skipped": scoring withholds the points (below)
    assert "compute-sanitizer not found" in stage.message


def test_sanitizer_device_not_supported(grader_for, sanitizer):
    sanitizer(unsupported=True)
    stage = sanitize(grader_for, CASES)
    assert stage.status == "error"
    assert "cannot run on this device" in stage.message


def test_sanitizer_without_gpu_is_skipped(grader_for, sanitizer):
    sanitizer()
    ex = vector_add()
    g = grader_for(ex)
    binary = fake_gtest(g.options.build_dir / "vector_add_test", CASES, no_gpu=True)
    stage = sanitizer_stage.run(g.options, ex, binary)
    assert stage.status == "skipped"
    assert "no GPU" in stage.message


# ------------------------------------------------------------------------------ benchmark

def bench(grader_for, data=None, ex=None, **config):
    ex = ex or vector_add()
    g = grader_for(ex)
    binary = fake_bench(g.options.build_dir / "vector_add_bench", data, **config)
    stage = benchmark.run(g.options, ex, binary)
    benchmark.ratios(ex, stage, Ceilings(g.options))
    scoring.score_benchmark(ex, stage)
    return stage


@pytest.mark.parametrize("nonce", [None, "", "0" * 32])
def test_benchmark_results_without_the_run_nonce_are_forged(grader_for, nonce):
    """A JSON file the student's code wrote itself (missing, empty or guessed nonce) earns
    nothing, however fast it says the kernel was."""
    data = dict(bench_data(5000, 1000), nonce=nonce)
    if nonce is None:
        del data["nonce"]
        data["nonce_absent"] = True
    stage = bench(grader_for, data if nonce is not None else None,
                  **({} if nonce is not None else {"raw": json.dumps(data)}))
    assert stage.status == "failed"
    assert "forged" in stage.message
    assert stage.points == 0
    assert all(m.ratio is None for m in stage.metrics)


def test_benchmark_full_marks(grader_for):
    stage = bench(grader_for, bench_data(900, 1000))
    assert stage.status == "passed"
    assert stage.points == stage.max_points == 40
    [metric] = stage.metrics
    assert metric.ratio == pytest.approx(0.9)
    assert metric.value == 900 and metric.baseline_value == 1000 and metric.unit == "GB/s"
    assert "full marks at 0.80x" in metric.message


def test_benchmark_keeps_where_the_programs_time_went(grader_for):
    data = dict(bench_data(900, 1000),
                timing={"init_s": 0.4, "measured_s": 0.3, "total_s": 2.5, "planted": 9,
                        "total": "s"})
    stage = bench(grader_for, data)
    assert stage.status == "passed"
    assert stage.details.timing == {"init_s": 0.4, "measured_s": 0.3, "total_s": 2.5}


def test_benchmark_stage_measures_but_awards_nothing(grader_for):
    ex = vector_add()
    g = grader_for(ex)
    binary = fake_bench(g.options.build_dir / "vector_add_bench", bench_data(550, 1000))
    stage = benchmark.run(g.options, ex, binary)
    benchmark.ratios(ex, stage, Ceilings(g.options))
    assert stage.status == "passed" and stage.points == 0
    [metric] = stage.metrics
    assert metric.ratio == pytest.approx(0.55) and metric.points == 0 and metric.message == ""
    assert metric.max_points == 40


def test_benchmark_partial_points_with_hint(grader_for):
    stage = bench(grader_for, bench_data(550, 1000))
    assert stage.status == "failed"
    assert stage.points == pytest.approx(20.0)
    assert "0.55x copy" in stage.message and "Try: " in stage.message


def test_benchmark_at_or_below_zero_at(grader_for):
    stage = bench(grader_for, bench_data(300, 1000))
    assert stage.points == 0 and stage.status == "failed"


def test_benchmark_without_completed(grader_for):
    stage = bench(grader_for, bench_data(900, 1000, completed=False), exit=0)
    assert stage.status == "crashed"
    assert "without finishing its report" in stage.message
    assert stage.points == 0 and len(stage.metrics) == 1


@pytest.mark.parametrize("raw", ["", "{\"measurements\": [", "[1, 2]", "null"])
def test_benchmark_with_broken_json(grader_for, raw):
    stage = bench(grader_for, raw=raw, exit=0)
    assert stage.status == "crashed"
    assert stage.points == 0


def test_benchmark_crash(grader_for):
    stage = bench(grader_for, bench_data(900, 1000, completed=False), exit=-11)
    assert stage.status == "crashed"


def test_benchmark_invalid_measurement(grader_for):
    stage = bench(grader_for, bench_data(
        900, 1000, valid=False, problem="wrong output in timed runs: 3 of 1000 differ"))
    assert stage.points == 0 and stage.status == "failed"
    assert "wrong output in timed runs" in stage.metrics[0].message


def test_benchmark_failed_requirement(grader_for):
    stage = bench(grader_for, bench_data(900, 1000, requirements=[
        {"name": "grid_stride", "ok": False, "message": "the grid must be smaller than n"},
        {"name": "other", "ok": True, "message": ""}]))
    assert stage.points == 0 and stage.status == "failed"
    assert "grid_stride: the grid must be smaller than n" in stage.message


def test_benchmark_reported_errors(grader_for):
    stage = bench(grader_for, bench_data(900, 1000, errors=["check of unknown measurement x"]))
    assert stage.points == 0
    assert "check of unknown measurement x" in stage.message


@pytest.mark.parametrize("drop, missing", [(("copy",), "'copy'"), (("vector_add",),
                                                                    "'vector_add'")])
def test_benchmark_missing_measurement(grader_for, drop, missing):
    stage = bench(grader_for, bench_data(900, 1000, drop=drop))
    assert stage.points == 0
    assert f"did not report {missing}" in stage.message


def test_benchmark_baseline_without_rate(grader_for):
    stage = bench(grader_for, bench_data(900, 0))
    assert stage.points == 0
    assert "baseline copy" in stage.message


def test_benchmark_no_gpu(grader_for):
    stage = bench(grader_for, no_gpu=True)
    assert stage.status == "skipped"


def test_benchmark_time_out(grader_for):
    started = time.monotonic()
    stage = bench(grader_for, hang=True, ex=vector_add(benchmark_timeout_s=1.0))
    assert time.monotonic() - started < 10
    assert stage.status == "timed_out"
    assert "timed out" in stage.message
    assert stage.points == 0


# ------------------------------------------------------------------------------ build

def test_compile_error_shows_the_compiler_lines(grader_for, fake_tools, tmp_path):
    # Ninja's paths are relative to the build directory; a diagnostic located in a file outside
    # the submission and the course's headers is withheld, with the line it quotes.
    (tmp_path / "secret.txt").write_text("root:$6$hash\n")
    fake_tools["ninja"] = str(fake_tool(
        tmp_path / "bin" / "ninja",
        "[1/3] Compiling vector_add.cu\nFAILED: vector_add.cu.o\n"
        "../submission/ch01_programming_model/vector_add.cu(12): error: identifier "
        "\"blockIdx\" is undefined\n"
        "../secret.txt(1): error: identifier \"root\" is undefined\n  root:$6$hash\n  ^\n"
        "ninja: build stopped: subcommand failed.\n", 1))
    ex = vector_add()
    g = grader_for(ex, gpu=GPU)
    result = g.grade_exercise(ex)
    assert result.status == ExerciseStatus.COMPILE_ERROR
    assert result.score == 0
    build = result.stage("build")
    assert build.status == "failed"
    assert build.output.startswith("FAILED: vector_add.cu.o")
    assert "identifier \"blockIdx\" is undefined" in build.output
    assert "root" not in build.output
    assert "[diagnostic in a file outside the submission withheld]" in build.output
    assert "ninja: build stopped" not in build.output
    assert [s.name for s in result.stages] == ["build"]


def test_ninja_compiles_with_ccache_sharing_objects_between_build_dirs(grader_for, fake_tools,
                                                                      tmp_path, monkeypatch):
    # ccache keys nvcc's results on the working directory unless told not to: the skeletons
    # and solutions builds then shared nothing. The build stage tells it, without overriding
    # a user's own setting.
    env_log = tmp_path / "ninja-env.txt"
    ninja = tmp_path / "bin" / "ninja"
    ninja.parent.mkdir(parents=True, exist_ok=True)
    ninja.write_text(f"#!/bin/sh\nenv > {env_log}\n")
    ninja.chmod(0o755)
    fake_tools["ninja"] = str(ninja)
    ex = vector_add()
    g = grader_for(ex, gpu=GPU)
    monkeypatch.delenv("CCACHE_NOHASHDIR", raising=False)
    monkeypatch.setenv("CCACHE_BASEDIR", "/my/own/base")
    assert build.run(g.options, ex).status == "passed"
    env = dict(line.split("=", 1) for line in env_log.read_text().splitlines() if "=" in line)
    assert env["CCACHE_NOHASHDIR"] == "1"
    assert env["CCACHE_BASEDIR"] == "/my/own/base"
    monkeypatch.delenv("CCACHE_BASEDIR")
    build.run(g.options, ex)
    env = dict(line.split("=", 1) for line in env_log.read_text().splitlines() if "=" in line)
    assert env["CCACHE_BASEDIR"] == str(g.options.root)


def test_a_compile_error_shows_messages_first_and_the_command_only_on_request(
        grader_for, fake_tools, tmp_path):
    command = ("/usr/bin/ccache nvcc -D_GLIBCXX_ASSERTIONS=1 -Ilibvector_add_submission.a.p "
               + "-Xcompiler=-Wall " * 40 + "-o vector_add.cu.o -c ../../../vector_add.cu")
    fake_tools["ninja"] = str(fake_tool(
        tmp_path / "bin" / "ninja",
        f"[1/3] Compiling vector_add.cu\nFAILED: vector_add.cu.o\n{command}\n"
        "../submission/ch01_programming_model/vector_add.cu(12): error: identifier "
        "\"blockIdx\" is undefined\n"
        "ninja: build stopped: subcommand failed.\n", 1))
    ex = vector_add()
    result = grader_for(ex, gpu=GPU).grade_exercise(ex)
    stage = result.stage("build")
    assert stage.output.splitlines() == [
        "FAILED: vector_add.cu.o", '../submission/ch01_programming_model/vector_add.cu(12): '
        'error: identifier "blockIdx" is undefined']
    assert stage.details["commands"] == [command]
    report = model.Report("s", 1, "t", exercises=[result])
    plain = render.terminal(report, io.StringIO())
    assert "-Xcompiler" not in plain
    assert plain.count("compilation failed") == 1  # the exercise's message, said once
    assert command in render.terminal(report, io.StringIO(), verbose=True)


# ------------------------------------------------------------------------------ exercise

@pytest.fixture
def grade(grader_for, fake_tools, tmp_path, monkeypatch):
    """grade(cases, bench=data, ex=..., **grader options) -> ExerciseResult, with a passing
    build and a clean fake sanitizer."""
    fake_tools["ninja"] = str(fake_tool(tmp_path / "bin" / "ninja"))
    fake_tools["compute-sanitizer"] = str(
        fake_sanitizer(tmp_path / "bin" / "compute-sanitizer", tmp_path / "san.log"))

    def go(cases, bench=None, ex=None, *, errors=None, gpu=GPU, gtest=None, **options):
        ex = ex or vector_add(test_timeout_s=2.0)
        if errors:
            fake_sanitizer(tmp_path / "bin" / "compute-sanitizer", tmp_path / "san.log",
                           errors=errors)
        g = grader_for(ex, gpu=gpu, **options)
        fake_gtest(g.options.build_dir / f"{ex.name}_test", cases, **(gtest or {}))
        fake_bench(g.options.build_dir / f"{ex.name}_bench",
                   bench if bench is not None else bench_data(900, 1000))
        started = time.monotonic()
        result = g.grade_exercise(ex)
        result.elapsed = time.monotonic() - started
        return result

    return go


def test_grade_full_marks(grade):
    r = grade(CASES)
    assert r.status == ExerciseStatus.PASSED and r.message == "full marks"
    assert r.score == r.max_score == 100
    assert [s.name for s in r.stages] == ["build", "integrity", "tests", "sanitizer",
                                          "benchmark"]
    assert r.stage("tests").points == 60


def test_grade_partial_performance(grade):
    r = grade(CASES, bench_data(550, 1000))
    assert r.status == ExerciseStatus.PARTIAL
    assert r.score == pytest.approx(80)
    assert "bandwidth" in r.message and "0.55x" in r.message


def test_grade_failing_cases_share_points_and_skip_benchmark(grade):
    # the failing case is outside the sanitizer's filter (Small/*:VectorAddEdge.*, less the gated stream case)
    cases = [CASES[0], CASES[1], CASES[2],
             {"name": CASES[3], "status": "failed", "message": "mismatch at [0]"}]
    r = grade(cases)
    assert r.status == ExerciseStatus.FAILED
    assert r.message == "tests: 3 of 4 cases passed"
    assert r.stage("tests").points == 45
    assert r.stage("sanitizer").status == "passed"
    assert r.score == 45
    bench = r.stage("benchmark")
    assert bench.status == "skipped" and bench.points == 0 and bench.max_points == 40
    assert "must pass its tests" in bench.message


def test_grade_failing_small_case_without_sanitizer_errors_keeps_points(grade):
    cases = [CASES[0], {"name": CASES[1], "status": "failed", "message": "mismatch at [0]"},
             CASES[2], CASES[3]]
    r = grade(cases)
    assert r.status == ExerciseStatus.FAILED
    assert r.stage("tests").points == 45
    assert r.score == 45
    assert r.message == "tests: 3 of 4 cases passed"


def test_grade_crash(grade):
    r = grade([CASES[0], CASES[1], {"name": CASES[2], "action": "segv"}, CASES[3]])
    assert r.status == ExerciseStatus.CRASHED
    assert "SIGSEGV" in r.message and CASES[2] in r.message
    assert r.score == 30
    assert r.stage("benchmark").status == "skipped"


def test_grade_abort(grade):
    r = grade([{"name": CASES[0], "action": "abort"}])
    assert r.status == ExerciseStatus.CRASHED and "SIGABRT" in r.message and r.score == 0


def test_grade_time_out_skips_the_sanitizer(grade):
    r = grade([CASES[0], {"name": CASES[1], "action": "hang"}], ex=vector_add(test_timeout_s=1))
    assert r.status == ExerciseStatus.TIMED_OUT
    assert CASES[1] in r.message
    assert r.stage("sanitizer") is None
    assert r.elapsed < 10


def test_grade_stopped_case_is_a_named_failure(grade):
    # case_timeout_s: the test main stops a case that never ends; the run is a failure that
    # names it (not a time-out of the whole binary), the cases before it keep their points.
    ex = vector_add(test_timeout_s=30.0, case_timeout_s=1.5)
    r = grade([CASES[0], {"name": CASES[1], "action": "stop_if_limited"}, CASES[2], CASES[3]],
              ex=ex)
    tests = r.stage("tests")
    assert r.status == ExerciseStatus.FAILED and tests.status == StageStatus.FAILED
    assert r.message.startswith(f"tests: {CASES[1]} did not finish within 1.5 s, so the run "
                                "was stopped there")
    assert "a recursion with no depth limit?" in r.message
    by_name = {c.name: c for c in tests.cases}
    assert by_name[CASES[1]].status == CaseStatus.FAILED
    assert by_name[CASES[2]].status == CaseStatus.NOT_RUN
    assert tests.details["stopped"] == CASES[1] and r.score == 15
    assert r.stage("sanitizer") is None and r.elapsed < 10


def test_grade_exited_early(grade):
    r = grade([CASES[0], {"name": CASES[1], "action": "exit", "code": 0}, CASES[2], CASES[3]])
    assert r.status == ExerciseStatus.EXITED_EARLY
    assert "exited early" in r.message and CASES[1] in r.message
    assert r.score == 15


def test_grade_sanitizer_voids_correctness(grade):
    cases = [CASES[0], {"name": CASES[1], "status_under_sanitizer": "failed"}, CASES[2],
             CASES[3]]
    r = grade(cases, errors={"memcheck": 1})
    assert r.status == ExerciseStatus.FAILED
    assert r.message == "sanitizer: memcheck found 1 error"
    tests = r.stage("tests")
    assert tests.points == 0 and "60 points voided" in tests.message
    assert r.score == 0
    assert r.stage("benchmark").status == "skipped"


def test_grade_not_submitted_names_the_file(grader_for, fake_tools):
    ex = vector_add()
    g = grader_for(ex, submit=False, gpu=GPU)
    r = g.grade_exercise(ex)
    assert r.status == ExerciseStatus.NOT_SUBMITTED
    assert "vector_add.cu" in r.message and "not found" in r.message
    assert r.score == 0 and r.max_score == 100 and r.stages == []


def test_grade_build_only(grade):
    r = grade(CASES, build_only=True, gpu=None)
    assert r.status == ExerciseStatus.SKIPPED
    assert "--build-only" in r.message
    assert [s.name for s in r.stages] == ["build", "integrity"]


def test_grade_test_binary_without_gpu_is_skipped(grade):
    r = grade(CASES, gtest={"no_gpu": True})
    assert r.status == ExerciseStatus.SKIPPED
    assert "no GPU" in r.message
    assert r.score == 0


def test_grade_min_cc(grade):
    r = grade(CASES, ex=vector_add(min_cc=9.5))
    assert r.status == ExerciseStatus.SKIPPED
    assert "needs compute capability 9.5" in r.message


def test_missing_sanitizer_withholds_the_correctness_points(grade, fake_tools):
    """A grade with no compute-sanitizer installed must not award correctness points as if the
    memory checks had run: the exercise is unchecked, not passed, and not benchmarked."""
    del fake_tools["compute-sanitizer"]
    r = grade(CASES)
    sanitizer = r.stage("sanitizer")
    assert sanitizer.status == StageStatus.ERROR
    assert sanitizer.message.startswith("compute-sanitizer not found")
    assert r.stage("tests").points == 0
    assert "60 points withheld: the sanitizer could not check the code" in \
        r.stage("tests").message
    assert r.status == ExerciseStatus.UNCHECKED and r.score == 0
    assert r.message.startswith("sanitizer: compute-sanitizer not found")
    assert r.stage("benchmark").points == 0


def test_unsupported_device_withholds_the_correctness_points(grade, tmp_path):
    fake_sanitizer(tmp_path / "bin" / "compute-sanitizer", tmp_path / "san.log",
                   unsupported=True)
    r = grade(CASES)
    assert r.stage("sanitizer").status == StageStatus.ERROR
    assert r.status == ExerciseStatus.UNCHECKED and r.score == 0


def test_a_tool_refusing_the_program_withholds_the_points(grade, tmp_path):
    # racecheck on dynamic parallelism: a warning and the error exit code, no error counted.
    fake_sanitizer(tmp_path / "bin" / "compute-sanitizer", tmp_path / "san.log",
                   refuses="memcheck")
    r = grade(CASES)
    sanitizer = r.stage("sanitizer")
    assert sanitizer.status == StageStatus.ERROR
    assert sanitizer.message.startswith("memcheck could not check this program: CUDA Dynamic "
                                        "Parallelism is not supported by the selected tool")
    assert "a course bug, not yours" in sanitizer.message
    assert r.status == ExerciseStatus.UNCHECKED and r.score == 0


def test_folders_planted_where_the_graders_files_go_cost_nothing_and_crash_nothing(grade):
    # Without a sandbox (--no-sandbox, or none on this machine) a test program can write
    # anywhere: it plants folders under the names of the later runs' nonce, event and report
    # files, of another exercise's, and where the exercise's own folder of runs goes. Every
    # run gets a fresh scratch folder, so the grade goes on as if nothing was planted.
    planted = ["../sanitizer-memcheck/nonce", "../sanitizer-memcheck/events/x",
               "../sanitizer-memcheck-list", "../benchmark/benchmark.json",
               "../benchmark/nonce", "../../other/tests/nonce"]
    r = grade(CASES, gtest={"plant": planted})
    assert r.status == ExerciseStatus.PASSED and r.score == r.max_score, \
        [(s.name, s.status, s.message) for s in r.stages]
    assert [s.name for s in r.stages] == ["build", "integrity", "tests", "sanitizer",
                                          "benchmark"]


def test_technique_is_checked_again_on_the_kernels_the_tests_launched(grade, monkeypatch):
    # A rule met in the compiled code by a kernel the launcher names but never launches is
    # checked again after the tests, on what the run launched (launch_record.cpp's events).
    ex = vector_add(test_timeout_s=2.0)
    ex = dataclasses.replace(ex, technique=[manifest.Technique(
        name="warp_shuffles", rule="uses_shuffle", points=10, message="m", hint="h")])
    calls = []

    def fake_technique(options, exercise, launched=None):
        calls.append(launched)
        ok = launched is None or "_Z6kernelv" in launched
        return StageResult("technique", StageStatus.PASSED if ok else StageStatus.FAILED,
                           cases=[CaseResult("warp_shuffles", CaseStatus.PASSED if ok
                                             else CaseStatus.FAILED, "checked")])
    monkeypatch.setattr(technique, "run", fake_technique)
    r = grade(CASES, ex=ex, gtest={"launched": ["_Z11dead_kernelv"]})
    assert calls == [None, {"_Z11dead_kernelv"}]
    assert r.stage("technique").status == StageStatus.FAILED
    # A run cut short launched less than the code does: the compiled code's verdict stands.
    calls.clear()
    crashed = [CASES[0], {"name": CASES[1], "action": "segv"}] + CASES[2:]
    r = grade(crashed, ex=ex, gtest={"launched": ["_Z11dead_kernelv"]})
    assert calls == [None] and r.stage("technique").status == StageStatus.NOT_COUNTED


@pytest.mark.parametrize("spare", [1, 3])
def test_technique_runs_beside_the_tests_only_with_cores_to_spare(grade, monkeypatch, spare):
    # A re-grade of one exercise (cores to spare) reads the compiled code while the tests
    # run; the report is the same either way, the rules on the compiled code in their place.
    ex = dataclasses.replace(vector_add(test_timeout_s=2.0), technique=[manifest.Technique(
        name="warp_shuffles", rule="uses_shuffle", points=10, message="m", hint="h")])
    threads, tests_started = [], threading.Event()
    real_tests_run = tests_stage.run

    def fake_technique(options, exercise, launched=None):
        if launched is None and spare > 1:  # beside the tests: they start meanwhile
            assert tests_started.wait(10), "the tests did not start beside the technique"
        threads.append((threading.current_thread().name, launched))
        return StageResult("technique", StageStatus.PASSED,
                           cases=[CaseResult("warp_shuffles", CaseStatus.PASSED, "checked")])

    def tests_run(*args, **kwargs):
        tests_started.set()
        return real_tests_run(*args, **kwargs)
    monkeypatch.setattr(technique, "run", fake_technique)
    monkeypatch.setattr(tests_stage, "run", tests_run)
    r = grade(CASES, ex=ex, gtest={"launched": ["_Z6kernelv"]},
              sanitizer_tools_at_once=spare)
    assert [s.name for s in r.stages] == ["build", "integrity", "technique", "tests",
                                          "sanitizer", "benchmark"]
    assert r.stage("technique").status == "passed", [(s.name, s.status, s.message)
                                                     for s in r.stages]
    static, on_what_ran = threads
    assert static[1] is None and on_what_ran[1] == {"_Z6kernelv"}
    assert (static[0] == "beside-tests") == (spare > 1)
    assert on_what_ran[0] != "beside-tests"


def test_an_error_beside_the_tests_reaches_the_grade(grade, monkeypatch):
    ex = dataclasses.replace(vector_add(test_timeout_s=2.0), technique=[manifest.Technique(
        name="warp_shuffles", rule="uses_shuffle", points=10, message="m", hint="h")])

    def broken(options, exercise, launched=None):
        raise RuntimeError("the disassembler fell over")
    monkeypatch.setattr(technique, "run", broken)
    with pytest.raises(RuntimeError, match="fell over"):
        grade(CASES, ex=ex, sanitizer_tools_at_once=3)


def test_grade_without_sanitizer_and_benchmark(grade):
    r = grade(CASES, sanitizer=False, benchmark=False)
    assert [s.name for s in r.stages] == ["build", "integrity", "tests", "benchmark"]
    assert r.stage("benchmark").message == "not run (--no-benchmark)"
    assert r.status == ExerciseStatus.PARTIAL and r.score == 60


# ------------------------------------------------------------------------------ whole run

def test_run_configures_builds_and_grades(grader_for, fake_tools, tmp_path):
    log = tmp_path / "tools.log"
    fake_tools["meson"] = str(fake_tool(tmp_path / "bin" / "meson", argv_log=log))
    fake_tools["ninja"] = str(fake_tool(tmp_path / "bin" / "ninja", argv_log=log))
    ex = vector_add()
    g = grader_for(ex, gpu=GPU, sanitizer=False)
    fake_gtest(g.options.build_dir / "vector_add_test", CASES)
    fake_bench(g.options.build_dir / "vector_add_bench", bench_data(900, 1000))
    report = g.run()
    assert [e.status for e in report.exercises] == ["passed"]
    assert report.score == report.max_score == 100 and report.percent == 100
    assert report.seed == 1234 and report.gpu == GPU and report.finished_at
    calls = [json.loads(l) for l in log.read_text().splitlines()]
    assert calls[0][0] == "setup" and f"-Dsubmission={g.options.submission}" in calls[0]
    # The sandbox's launcher first, so that the first student program can run in it; this
    # stand-in ninja builds none, and the report says the sandbox was unavailable and why.
    assert calls[1][-1] == "course_sandbox"
    assert report.sandbox == {"status": "unavailable",
                              "reason": "the launcher course_sandbox did not build"}
    assert "vector_add_test" in calls[2] and "-k" in calls[2]


def test_run_configure_failure_is_one_grader_error(grader_for, fake_tools, tmp_path):
    fake_tools["meson"] = str(fake_tool(tmp_path / "bin" / "meson",
                                        "The Meson build system\nmeson.build:3:0: ERROR: "
                                        "Dependency \"cuda\" not found\n", 1))
    ex = vector_add()
    g = grader_for(ex, gpu=GPU)
    with pytest.raises(GraderError, match="configuring the build failed: .*ERROR: "
                       "Dependency \"cuda\" not found"):
        g.run()


def test_run_without_meson_is_a_grader_error(grader_for, fake_tools):
    ex = vector_add()
    g = grader_for(ex, gpu=GPU)
    with pytest.raises(GraderError, match="meson not found"):
        g.run()


def test_tools_set_up_installed_are_found_without_sourcing_anything(monkeypatch, tmp_path):
    # scripts/setup.sh puts meson and ninja in the course's .venv; a student who then runs
    # `python3 -m grader` with the system Python must not be told they are missing.
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "meson").write_text("#!/bin/sh\n")
    monkeypatch.setattr(tools, "ROOT", tmp_path)
    monkeypatch.setattr(tools, "_beside_python", lambda name: None)
    monkeypatch.setattr(tools.shutil, "which", lambda name: None)
    assert tools.find("meson", "to configure the build") == str(venv_bin / "meson")
    # ...and Meson, which looks for nvcc and ninja on PATH itself, gets those places too.
    monkeypatch.setenv("PATH", "/my/bin")
    options = GradeOptions(root=tmp_path, submission=tmp_path, build_dir=tmp_path / "b", seed=1)
    path = build.compiler_env(options)["PATH"].split(":")
    assert path[0] == "/my/bin" and str(venv_bin) in path


def test_split_compile_threads_give_a_small_build_the_idle_cores():
    assert build.split_compile_threads(1, cores=16) == 16   # a student's re-grade
    assert build.split_compile_threads(3, cores=16) == 5
    assert build.split_compile_threads(13, cores=16) == 1   # a chapter: no splitting
    assert build.split_compile_threads(58, cores=16) == 1
    assert build.split_compile_threads(1, cores=1) == 1


def test_compiler_env_asks_nvcc_to_split_only_where_it_can(monkeypatch, tmp_path):
    options = GradeOptions(root=tmp_path, submission=tmp_path, build_dir=tmp_path / "b", seed=1)
    monkeypatch.setenv("NVCC_APPEND_FLAGS", "-Xptxas=-v")
    monkeypatch.setattr(build, "nvcc_splits", lambda path: True)
    assert build.compiler_env(options, 8)["NVCC_APPEND_FLAGS"] == "-Xptxas=-v --split-compile=8"
    assert build.compiler_env(options, 1)["NVCC_APPEND_FLAGS"] == "-Xptxas=-v"
    monkeypatch.setattr(build, "nvcc_splits", lambda path: False)
    assert build.compiler_env(options, 8)["NVCC_APPEND_FLAGS"] == "-Xptxas=-v"


def test_nvcc_splits_asks_the_nvcc_on_the_path(tmp_path):
    # A stand-in nvcc that, like CUDA's, refuses an option it does not know.
    for name, knows in (("new", True), ("old", False)):
        folder = tmp_path / name
        folder.mkdir()
        nvcc = folder / "nvcc"
        nvcc.write_text("#!/bin/sh\n" + ("exit 0\n" if knows else
                        "echo \"nvcc fatal : Unknown option '$1'\" >&2; exit 1\n"))
        nvcc.chmod(0o755)
        assert build.nvcc_splits(str(folder)) is knows
    assert build.nvcc_splits(str(tmp_path / "none")) is False


def test_build_progress_names_each_exercise_as_it_is_built(monkeypatch):
    said = []
    clock = iter([0.0, 1.0, 20.0, 21.0, 22.0, 23.0])
    monkeypatch.setattr(build.time, "monotonic", lambda: next(clock))
    a, b = vector_add(), vector_add(name="other")
    progress = build.BuildProgress([a, b], said.append)
    for line in ["[1/9] Compiling C++ object support.cpp.o",   # 1 s: too soon for a step line
                 "[2/9] Compiling Cuda object bench.cu.o",      # 20 s: a step line
                 "[5/9] Linking target vector_add_test",
                 "ninja: warning: not a step line",
                 "[6/9] Linking target vector_add_bench",
                 "[7/9] Linking target other_test"]:
        progress(line)
    assert said == ["building: step 2 of 9 (20 s)", "built vector_add (1 of 2, 22 s)"]


def test_proc_run_passes_each_line_as_it_comes():
    lines = []
    result = proc.run(["sh", "-c", "printf 'a\\nb'; sleep 0.2; printf 'c\\nd\\n'"], 10,
                      on_line=lines.append)
    assert result.returncode == 0 and lines == ["a", "bc", "d"]
    # A failing display never stops the program or the collection of its output.
    result = proc.run(["sh", "-c", "echo x; echo y"], 10, on_line=lambda line: 1 / 0)
    assert result.output == "x\ny\n"


@pytest.mark.parametrize("tty, quiet, shown", [(True, False, True), (False, False, False),
                                                (True, True, False)])
def test_grade_progress_only_for_a_person_watching(monkeypatch, tmp_path, tty, quiet, shown):
    import sys
    from grader import cli
    from helpers import sample_report

    class Stream(io.StringIO):
        def isatty(self):
            return tty

    class FakeGrader:
        def __init__(self, options, exercises, progress, gpu):
            self.progress = progress

        def run(self):
            self.progress("built vector_add (1 of 1, 3 s)")
            return sample_report()

    err = Stream()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(cli, "Grader", FakeGrader)
    monkeypatch.setattr(tools, "query_gpu", lambda: GPU)
    args = ["grade", "skeletons", "-e", "vector_add", "--json", str(tmp_path / "r.json")]
    assert cli.main(args + (["-q"] if quiet else [])) == 0
    assert ("grader: built vector_add (1 of 1, 3 s)" in err.getvalue()) == shown


def test_warnings_about_the_students_file_are_shown_even_when_it_compiles(grader_for, fake_tools,
                                                                          tmp_path):
    fake_tools["ninja"] = str(fake_tool(tmp_path / "bin" / "ninja"))  # prints nothing
    ex = vector_add()
    g = grader_for(ex, gpu=GPU)
    mine = f"../../../workspace/{ex.chapter}/vector_add.cu"
    g.build_log = "\n".join([
        "[3/40] Compiling Cuda object libvector_add_submission.a.p/vector_add.cu.o",
        f'{mine}(14): warning #177-D: variable "unused" was declared but never referenced',
        f"{mine}:20:7: warning: comparison of integer expressions of different signedness",
        "../../../support/src/bench.cu(3): warning #1: not the student's file",
        f'{mine}(14): warning #177-D: variable "unused" was declared but never referenced'])
    stage = build.run(g.options, ex, g.build_log)
    assert stage.status == "passed"
    assert stage.details["warnings"] == [g.build_log.splitlines()[1], g.build_log.splitlines()[2]]
    assert stage.message == "compiled, with 2 compiler warnings in your code"
    result = scoring.grade(ex, [stage, StageResult("tests", "passed", details={"passed": 1,
                                                                               "total": 1})])
    text = render.terminal(model.Report("s", 1, "t", exercises=[result]), io.StringIO())
    assert "build: compiled, with 2 compiler warnings in your code" in text
    assert "was declared but never referenced" in text and "not the student's file" not in text
    build_only = scoring.not_run(ex, [stage], "compiled (--build-only: not run)")
    report = model.Report("s", 1, "t", options={"build_only": True}, exercises=[build_only])
    text = render.terminal(report, io.StringIO())
    assert f"── {ex.key}: compiled" in text and "2 compiler warnings" in text


def test_a_build_directory_older_than_an_option_is_set_up_again(grader_for, fake_tools,
                                                               tmp_path):
    # After a course update adds a Meson option, `meson setup --reconfigure -D<new>=...` fails
    # with "Unknown option" in a build directory made before it; the grader wipes and retries.
    log = tmp_path / "meson-calls.txt"
    meson = tmp_path / "bin" / "meson"
    meson.parent.mkdir(parents=True, exist_ok=True)
    meson.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n"
                     "case \"$*\" in *--reconfigure*) echo 'ERROR: Unknown option: \"x\".'; "
                     "exit 1;; esac\n")
    meson.chmod(0o755)
    fake_tools["meson"] = str(meson)
    g = grader_for(vector_add(), gpu=GPU)
    g.options.build_dir.mkdir(parents=True, exist_ok=True)
    (g.options.build_dir / "build.ninja").write_text("")
    build.configure(g.options, lambda message: None)
    calls = log.read_text().splitlines()
    assert len(calls) == 2
    assert calls[0].startswith("setup --reconfigure") and calls[1].startswith("setup --wipe")


@pytest.mark.parametrize("kinds, tool_says, again", [
    ({model.FailureKind.OUT_OF_MEMORY}, "", True),       # a case ran out of memory under it
    (set(), "========= Internal error: out of memory", True),  # the tool itself did
    (set(), "", False),                                  # a failing case: the code's own
])
def test_the_sanitizer_stage_carries_the_failure_kinds_of_its_runs(monkeypatch, tmp_path, kinds,
                                                                    tool_says, again):
    """What its runs' cases ran into (the test main's failure kinds) travels with the sanitizer
    stage, so the pipeline runs it again alone like the tests stage."""
    from grader import pipeline
    from grader.stages import tests as tests_stage
    monkeypatch.setattr(tools, "find", lambda name, required_for="": "/bin/true")

    def sub_run(*args, **kwargs):
        details = model.TestsDetails(exit="exit status 1")
        details.failure_kinds = set(kinds)
        return StageResult("sanitizer-memcheck", StageStatus.FAILED, message="1 of 2 cases passed",
                           output="========= ERROR SUMMARY: 0 errors\n" + tool_says,
                           cases=[CaseResult("S.a", CaseStatus.FAILED),
                                  CaseResult("S.b", CaseStatus.PASSED)], details=details)

    monkeypatch.setattr(tests_stage, "run", sub_run)
    options = GradeOptions(root=ROOT, submission=tmp_path, build_dir=tmp_path, seed=1)
    stage = sanitizer_stage.run(options, vector_add(), tmp_path / "vector_add_test")
    assert stage.status is StageStatus.PASSED and "failure_kinds" not in stage.details.to_dict()
    failed = dataclasses.replace(stage, status=StageStatus.FAILED)
    item = pipeline._Checked(vector_add(), [StageResult("tests", StageStatus.PASSED), failed])
    assert pipeline.Grader._load_may_explain(item) is again
