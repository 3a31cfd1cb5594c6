"""Grader.run with several exercises checked at once (options.parallel), on stand-in programs
that log when they start and end and whether others ran beside them: the tests and sanitizer
runs overlap, the benchmarks never overlap anything, a run that did not pass among others is
run again alone and that run is the verdict, the verdicts equal those of a run one exercise
at a time, and Ctrl-C ends the programs of every thread."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

from fakes import bench_data, fake_bench, fake_gtest, use_fake_build_tools
from grader import model, pipeline, proc
from grader.pipeline import Grader
from grader.stages.common import GradeOptions
from helpers import ROOT, vector_add

GPU = model.GpuInfo("Fake GPU", "9.0", "1", 80 * 1024)
NAMES = ("ex_a", "ex_b", "ex_c", "ex_d")


@pytest.fixture
def course(tmp_path, monkeypatch):
    """Four copies of vector_add under other names, one submission holding its file, fake
    meson, ninja and compute-sanitizer."""
    use_fake_build_tools(monkeypatch, tmp_path)
    submission = tmp_path / "submission" / "ch01_programming_model"
    submission.mkdir(parents=True)
    (submission / "vector_add.cu").write_text("// submitted\n")
    (tmp_path / "crowd").mkdir()
    return tmp_path


def make_grader(course, parallel, cases_of, bench_seconds=0.2):
    build = course / f"build-{parallel}"
    build.mkdir()
    timeline = course / f"timeline-{parallel}.log"
    common = {"crowd_dir": str(course / "crowd"), "timeline": str(timeline)}
    exercises = []
    for name in NAMES:
        exercises.append(vector_add(name=name, sanitizer_filter="*"))
        fake_gtest(build / f"{name}_test", cases_of(name), **common)
        fake_bench(build / f"{name}_bench",
                   bench_data(900, 1000), seconds=bench_seconds, **common)
    options = GradeOptions(root=ROOT, submission=course / "submission", build_dir=build,
                           seed=1, parallel=parallel)
    return Grader(options, exercises, gpu=GPU), timeline


def events(timeline):
    return [json.loads(line) for line in timeline.read_text().splitlines()]


def intervals(timeline):
    """(program, start, end) of every run, in start order."""
    started, spans = {}, []
    for e in events(timeline):
        key = (e["who"], e["sanitizer"])
        if e["event"] == "start":
            started[key] = e["t"]
        else:
            spans.append((e["who"], started.pop(key), e["t"]))
    return sorted(spans, key=lambda s: s[1])


def slow(name):
    return [{"name": "Suite.one", "action": "sleep", "seconds": 0.4}, "Suite.two"]


def test_tests_overlap_and_benchmarks_run_alone(course):
    grader, timeline = make_grader(course, 4, slow)
    report = grader.run()
    assert [e.status for e in report.exercises] == ["passed"] * 4
    spans = intervals(timeline)
    tests_spans = [s for s in spans if s[0].endswith("_test")]
    assert any(a[2] > b[1] for a, b in zip(tests_spans, tests_spans[1:])), \
        "no two exercises' tests ran at once"
    for who, start, end in spans:
        if who.endswith("_bench"):
            others = [s for s in spans if s[0] != who and s[1] < end and s[2] > start]
            assert others == [], f"{who} ran beside {others}"
    # The benchmarks come after every tests and sanitizer run.
    first_bench = min(s[1] for s in spans if s[0].endswith("_bench"))
    assert all(s[2] <= first_bench for s in tests_spans)


def test_a_failure_among_others_is_run_again_alone_and_that_is_the_verdict(course):
    def cases(name):
        if name == "ex_b":  # fails only when others run beside it, as out of memory would
            return [{"name": "Suite.one", "action": "fail_when_crowded", "seconds": 0.3}]
        return slow(name)

    grader, timeline = make_grader(course, 4, cases)
    report = grader.run()
    ex_b = report.exercises[1]
    assert ex_b.name == "ex_b" and ex_b.status == "passed" and ex_b.score == ex_b.max_score
    assert ex_b.stage("tests").details["among_others"] == "failed"
    runs = [e for e in events(timeline) if e["who"] == "ex_b_test" and e["event"] == "end"
            and not e["sanitizer"]]
    assert [r["crowded"] for r in runs] == [True, False]  # crowded first, then alone
    # The others passed among others and were not run again.
    assert all("among_others" not in e.stage("tests").details
               for e in report.exercises if e.name != "ex_b")


def test_verdicts_are_those_of_one_at_a_time(course):
    def cases(name):
        return {"ex_a": slow(name),
                "ex_b": [{"name": "Suite.one", "status": "failed", "message": "wrong at 3"}],
                "ex_c": [{"name": "Suite.one", "action": "segv"}],
                "ex_d": ["Suite.one", {"name": "Suite.two", "status": "failed"}]}[name]

    serial, _ = make_grader(course, 1, cases)
    parallel, _ = make_grader(course, 3, cases)
    one, many = serial.run(), parallel.run()

    def verdicts(report):
        return [(e.name, e.status, e.score, e.message,
                 [(s.name, s.status, s.message) for s in e.stages if s.name != "build"])
                for e in report.exercises]

    assert verdicts(many) == verdicts(one)
    assert [e.status for e in one.exercises][:3] == ["passed", "failed", "crashed"]
    assert one.exercises[3].score < one.exercises[3].max_score


def test_the_default_follows_the_gpu_memory_and_the_cores():
    assert pipeline.default_parallel(GPU, cores=16) == 8
    assert pipeline.default_parallel(GPU, cores=6) == 3
    small = model.GpuInfo("Small", "8.6", "1", 24 * 1024)
    assert pipeline.default_parallel(small, cores=64) == 2
    assert pipeline.default_parallel(None, cores=64) == 1  # nothing known: one at a time
    assert pipeline.default_parallel(None, build_only=True, cores=2) == 1
    assert pipeline.default_parallel(None, build_only=True, cores=64) == pipeline.MAX_PARALLEL


def test_interrupt_ends_the_programs_of_every_thread(course):
    hang = [{"name": "Suite.one", "action": "hang"}]
    grader, timeline = make_grader(course, 4, lambda name: hang)

    def interrupt_when_all_run():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if timeline.exists() and len(events(timeline)) >= len(NAMES):
                break
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, which only the main thread sees

    threading.Thread(target=interrupt_when_all_run, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        grader.run()
    assert time.monotonic() - started < 30
    assert list((course / "crowd").iterdir()) == [] or _all_gone(course / "crowd")
    # No program was left running, and new ones may start again.
    assert proc._running == {}
    assert not proc._stopping.is_set()


def _all_gone(crowd, timeout_s=5.0):
    # Killed programs leave their marker behind (no atexit on SIGKILL): their pids are gone.
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        alive = []
        for marker in crowd.iterdir():
            try:
                os.kill(int(marker.name), 0)
                alive.append(marker.name)
            except ProcessLookupError:
                pass
        if not alive:
            return True
        time.sleep(0.1)
    return False
