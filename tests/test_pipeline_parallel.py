"""Grader.run with several exercises checked at once (options.parallel), on stand-in programs
that log when they start and end and whether others ran beside them: the tests and sanitizer
runs overlap, the benchmarks never overlap anything, a run that did not pass among others is
run again alone and that run is the verdict, the verdicts equal those of a run one exercise
at a time, and Ctrl-C ends the programs of every thread."""

from __future__ import annotations

import dataclasses
import json
import re
import os
import signal
import threading
import time
from datetime import datetime

import pytest

from fakes import (bench_data, fake_bench, fake_ceilings, fake_gtest, linking_ninja,
                   use_fake_build_tools)
from grader import check_times, model, pipeline, proc
from grader.pipeline import Grader
from grader.stages import build
from grader.stages.common import GradeOptions
from helpers import ROOT, vector_add

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

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


def with_linking_ninja(course, timeline, fail=()):
    """Swaps the stand-in ninja for one that links a target every 0.15 s."""
    linking_ninja(course / "bin" / "ninja", timeline, 0.15, fail)


def events(timeline):
    return [json.loads(line) for line in timeline.read_text().splitlines()]


def intervals(timeline):
    """(program, start, end) of every run, in start order."""
    started, spans = {}, []
    for e in events(timeline):
        key = (e["who"], e.get("sanitizer"))
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
    # The report says how long each phase took: four benchmarks of 0.2 s one after another
    # make at least 0.8 s, and the phases add up to no more than the grade's wall time.
    assert list(report.phases) == ["configure_s", "build_s", "checks_s", "benchmarks_s",
                                   "ceilings_s"]
    assert report.phases["benchmarks_s"] >= 0.8
    assert report.phases["checks_s"] >= 0.4  # each exercise's tests sleep 0.4 s
    started = datetime.fromisoformat(report.started_at)
    finished = datetime.fromisoformat(report.finished_at)
    assert sum(report.phases.values()) <= (finished - started).total_seconds() + 1.5
    # The timeline says the same: every exercise's stages, each benchmark after the checks.
    rows = report.timeline
    assert {(r["exercise"], r["stage"]) for r in rows} >= {
        (e.key, s) for e in report.exercises for s in ("tests", "sanitizer", "benchmark")}
    assert all(0 <= r["start_s"] <= r["end_s"] for r in rows)
    last_check = max(r["end_s"] for r in rows if r["stage"] in ("tests", "sanitizer"))
    assert all(r["start_s"] >= last_check for r in rows if r["stage"] == "benchmark")
    tests_rows = [r for r in rows if r["stage"] == "tests"]
    assert any(a["end_s"] > b["start_s"] for a, b in zip(tests_rows, tests_rows[1:]))


def test_shared_ceilings_are_measured_once_after_the_benchmarks_and_alone(course):
    """ex_a and ex_c compare with a copy of one size, ex_b with a copy of another, ex_d with a
    baseline of its own process: one run of the ceilings program measures both copies, after
    every benchmark, with nothing beside it, and each exercise's ratio uses its own size."""
    grader, timeline = make_grader(course, 4, lambda name: ["Suite.one"])
    build = grader.options.build_dir
    common = {"crowd_dir": str(course / "crowd"), "timeline": str(timeline)}
    keys = {"ex_a": "copy:1000", "ex_b": "copy:2000", "ex_c": "copy:1000"}
    for name, key in keys.items():
        fake_bench(build / f"{name}_bench", bench_data(900, 0, baseline_key=key),
                   seconds=0.1, **common)
    log = course / "ceilings.log"
    fake_ceilings(build / "course_ceilings", log, {"copy:1000": 1000.0, "copy:2000": 1800.0},
                  seconds=0.2, **common)
    report = grader.run()
    out = grader.options.work_dir / "ceilings" / "1-course_ceilings.json"
    assert [json.loads(line) for line in log.read_text().splitlines()] == \
        [["--only", "copy:1000,copy:2000", "--json", str(out)]]
    ratios = {e.name: next(s for s in e.stages if s.name == "benchmark").metrics[0].ratio
              for e in report.exercises}
    assert ratios == pytest.approx({"ex_a": 0.9, "ex_b": 0.5, "ex_c": 0.9, "ex_d": 0.9})
    first = {e.name: next(s for s in e.stages if s.name == "benchmark")
             .details["ceilings_measured"] for e in report.exercises}
    assert first == {"ex_a": ["copy:1000"], "ex_b": ["copy:2000"], "ex_c": [], "ex_d": []}
    spans = intervals(timeline)
    [ceilings] = [s for s in spans if s[0] == "course_ceilings"]
    assert all(end <= ceilings[1] for who, _, end in spans if who != "course_ceilings")
    assert report.phases["ceilings_s"] >= 0.2  # the stand-in sleeps 0.2 s


def test_a_failure_among_others_is_run_again_alone_and_that_is_the_verdict(course):
    def cases(name):
        # ex_b fails when others run beside it, as out of memory would. The others run 1.5 s
        # and ex_b looks for them for as long, so that they meet however loaded the machine.
        if name == "ex_b":
            return [{"name": "Suite.one", "action": "fail_when_crowded", "seconds": 1.5}]
        return [{"name": "Suite.one", "action": "sleep", "seconds": 1.5}, "Suite.two"]

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


def test_only_the_cases_the_neighbours_failed_run_again_and_a_clean_sanitizer_stands(course):
    """A run that ended well but for cases that failed in a way the neighbours may cause runs
    those cases again alone, not the whole program; the others' results and a sanitizer stage
    that passed among the others stand. The first run's reason is kept."""
    def cases(name):
        if name == "ex_b":
            return [{"name": "Suite.leaks", "action": "fail_when_crowded", "seconds": 1.5},
                    "Suite.two", "Suite.three"]
        return [{"name": "Suite.one", "action": "sleep", "seconds": 1.5}, "Suite.two"]

    grader, timeline = make_grader(course, 4, cases)
    argv_log = course / "ex_b_argv.log"
    fake_gtest(course / "build-4" / "ex_b_test", cases("ex_b"), crowd_dir=str(course / "crowd"),
               timeline=str(timeline), argv_log=str(argv_log))
    report = grader.run()
    ex_b = report.exercises[1]
    assert ex_b.name == "ex_b" and ex_b.status == "passed" and ex_b.score == ex_b.max_score
    runs = [json.loads(line) for line in argv_log.read_text().splitlines()
            if "--gtest_list_tests" not in line]
    assert runs[-1] == ["--gtest_filter=Suite.leaks"]
    tests = ex_b.stage("tests")
    assert [c.name for c in tests.cases] == ["Suite.leaks", "Suite.two", "Suite.three"]
    assert all(c.status == "passed" for c in tests.cases)
    assert tests.details["among_others"] == "failed"
    assert tests.details["again_alone"] == ["Suite.leaks"]
    assert "Suite.leaks: failed: out of memory" in tests.details["among_others_why"]
    runs = [e for e in events(timeline) if e["who"] == "ex_b_test" and e["event"] == "end"]
    assert [(r["crowded"], r["sanitizer"]) for r in runs][-1] == (False, None)
    # once among others, once alone, and the sanitizer (clean among others) once only
    assert len([r for r in runs if r["sanitizer"] is None]) == 2
    assert len([r for r in runs if r["sanitizer"] is not None]) == 1
    assert "among_others" not in ex_b.stage("sanitizer").details
    assert [s.name for s in ex_b.stages][-3:] == ["tests", "sanitizer", "benchmark"]


def test_the_next_grade_in_a_build_folder_checks_the_longest_first(course):
    """The build folder keeps how long each exercise's checks took (check_times); the next
    grade there starts the longest first, so that none of them is left to run alone at the end."""
    def cases(name):
        seconds = 1.0 if name == "ex_d" else 0.1
        return [{"name": "Suite.one", "action": "sleep", "seconds": seconds}]

    grader, _ = make_grader(course, 2, cases)
    first = grader.run()
    times = check_times.load(grader.options.build_dir)
    assert set(times) == set(NAMES) and max(times, key=times.get) == "ex_d"
    first_tests = [r["exercise"] for r in first.timeline if r["stage"] == "tests"]
    assert first_tests.index("ch01_programming_model/ex_d") >= 2  # roster order: last
    again = Grader(grader.options, grader.exercises, gpu=GPU).run()
    tests_rows = [r["exercise"] for r in again.timeline if r["stage"] == "tests"]
    assert "ch01_programming_model/ex_d" in tests_rows[:2], tests_rows  # two workers
    # An unreadable file orders nothing.
    (grader.options.build_dir / check_times.CHECK_TIMES).write_text("{not json")
    assert check_times.load(grader.options.build_dir) == {}


def test_an_exercise_that_tests_alone_runs_after_the_others_and_stops_none_of_them(course):
    """ex_b's tests hold the GPU alone: among the others they would stop every other
    exercise's programs while the GPU drained and while they ran. Its compiled-code checks
    run in the pool, its programs after every other exercise's, before the benchmarks."""
    grader, timeline = make_grader(course, 4, slow)
    grader.exercises[1] = dataclasses.replace(grader.exercises[1], tests_alone=True)
    report = grader.run()
    assert [e.status for e in report.exercises] == ["passed"] * 4
    spans = intervals(timeline)
    alone = [s for s in spans if s[0] == "ex_b_test"]
    others = [s for s in spans if s[0].endswith("_test") and s[0] != "ex_b_test"]
    assert alone and others
    assert min(s[1] for s in alone) >= max(s[2] for s in others), (alone, others)
    assert any(a[2] > b[1] for a, b in zip(others, others[1:])), "the others did not overlap"
    first_bench = min(s[1] for s in spans if s[0].endswith("_bench"))
    assert max(s[2] for s in alone) <= first_bench
    rows = [r for r in report.timeline if r["exercise"].endswith("/ex_b")]
    assert {r["stage"] for r in rows} >= {"tests", "sanitizer", "benchmark"}


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
    assert pipeline.default_parallel(None, build_only=True, cores=1) == 1
    assert pipeline.default_parallel(None, build_only=True, cores=2) == 2  # CI's two cores
    assert pipeline.default_parallel(None, build_only=True, cores=64) == pipeline.MAX_PARALLEL


def test_interrupt_ends_the_programs_of_every_thread(course):
    hang = [{"name": "Suite.one", "action": "hang"}]
    grader, timeline = make_grader(course, 4, lambda name: hang)

    def interrupt_when_all_run():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if timeline.exists() and len(events(timeline)) >= len(NAMES):
                    break
            except ValueError:  # a line still being written: this thread must not die of it
                pass
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, which only the main thread sees

    # Ctrl-C as at a terminal even where this runs as a background job, which starts with
    # SIGINT ignored (Python then installs no KeyboardInterrupt handler).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt_when_all_run, daemon=True).start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            grader.run()
    finally:
        signal.signal(signal.SIGINT, previous)
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


def test_checks_start_as_soon_as_an_exercise_has_linked(course):
    grader, timeline = make_grader(course, 4, slow)
    with_linking_ninja(course, timeline)
    report = grader.run()
    assert [e.status for e in report.exercises] == ["passed"] * 4
    builds = [e for e in events(timeline) if e["who"] == "ninja"
              and e["targets"] != ["course_sandbox"]]
    # One build of everything; nothing linked again afterwards for an exercise that linked.
    assert [e["event"] for e in builds] == ["start", "end"], builds
    build_end = builds[1]["t"]
    first_test = min(s[1] for s in intervals(timeline) if s[0] == "ex_a_test")
    assert first_test < build_end, "ex_a's tests waited for the whole build"
    assert report.phases["build_s"] >= 8 * 0.15


def test_the_build_comes_in_waves_and_the_first_checks_start_before_the_rest_builds(course):
    """Ninja links only when nothing on a longer path waits, so one build of everything would
    link every program at its end. With two workers, two exercises build first (with the
    course libraries the integrity stage reads), their checks start, and the other two build
    in a second ninja run meanwhile, with the ceilings programs."""
    grader, timeline = make_grader(course, 2, slow)
    with_linking_ninja(course, timeline)
    report = grader.run()
    assert [e.status for e in report.exercises] == ["passed"] * 4
    builds = [e for e in events(timeline) if e["who"] == "ninja" and e["event"] == "start"
              and e["targets"] != ["course_sandbox"]]
    assert [b["targets"] for b in builds] == [
        [*build.COURSE_LIBRARIES, "ex_a_test", "ex_a_bench", "ex_b_test", "ex_b_bench"],
        ["ex_c_test", "ex_c_bench", "ex_d_test", "ex_d_bench", "course_ceilings"]]
    second_ends = [e["t"] for e in events(timeline) if e["who"] == "ninja"
                   and e["event"] == "end" and e["targets"] == builds[1]["targets"]]
    first_test = min(s[1] for s in intervals(timeline) if s[0] == "ex_a_test")
    assert first_test < second_ends[0], "ex_a's tests waited for the second wave"


def test_waves_double_and_a_short_last_one_joins_the_one_before():
    exercises = [vector_add(name=f"ex_{k}") for k in range(58)]
    assert [len(w) for w in build.waves(exercises, 8)] == [8, 16, 34]
    assert [ex for w in build.waves(exercises, 8) for ex in w] == exercises
    assert [len(w) for w in build.waves(exercises[:4], 2)] == [2, 2]
    assert [len(w) for w in build.waves(exercises[:5], 4)] == [5]
    assert [len(w) for w in build.waves(exercises[:1], 8)] == [1]
    assert build.waves([], 8) == []


def test_without_times_the_exercises_with_more_sanitizer_tools_are_expected_longer():
    quick = vector_add(name="quick")
    racy = dataclasses.replace(vector_add(name="racy"),
                               sanitizer_tools=("memcheck", "racecheck", "synccheck"))
    assert check_times.expected(racy, {}) > check_times.expected(quick, {})
    assert check_times.expected(racy, {"racy": 0.5}) == 0.5


def test_a_failed_link_is_not_started_early_and_its_build_names_the_error(course):
    grader, timeline = make_grader(course, 4, slow)
    with_linking_ninja(course, timeline, fail=("ex_b_test",))
    report = grader.run()
    ex_b = report.exercises[1]
    assert ex_b.name == "ex_b" and ex_b.status == "compile_error", ex_b.status
    assert "undefined reference" in ex_b.stage("build").output
    assert not any(e["who"] == "ex_b_test" for e in events(timeline)), "a failed link ran"
    # ex_b alone was built again after the build, to name its error; the others passed.
    builds = [e for e in events(timeline) if e["who"] == "ninja" and e["event"] == "start"
              and e["targets"] != ["course_sandbox"]]
    assert [b["targets"] for b in builds[1:]] == [["ex_b_test", "ex_b_bench"]]
    assert [e.status for e in report.exercises if e.name != "ex_b"] == ["passed"] * 3


def test_only_failures_the_neighbours_could_cause_are_run_again(course):
    def cases(name):
        return {"ex_a": slow(name),
                # a wrong answer: the code's own, whoever ran beside it
                "ex_b": [{"name": "Suite.one", "status": "failed",
                          "message": "c[3] = 1 where 2 was expected"},
                         # words the code printed are no failure kind of the test main's
                         {"name": "Suite.two", "status": "failed", "kinds": [],
                          "message": "out of memory"}],
                # a crash may be an allocation that failed because others held the memory
                "ex_c": [{"name": "Suite.one", "action": "segv"}],
                # a leak check reads the device's free memory, which the neighbours change
                "ex_d": [{"name": "Suite.one", "status": "failed",
                          "message": "Actual: false (device memory leaked: 82 MiB fewer free "
                                     "after the call than before)"}]}[name]

    grader, timeline = make_grader(course, 4, cases)
    report = grader.run()

    def test_runs(who):  # starts: a crashed run logs no end
        return [e for e in events(timeline) if e["who"] == who and e["event"] == "start"
                and not e["sanitizer"]]

    assert len(test_runs("ex_b_test")) == 1, "a wrong answer was run again"
    assert "among_others" not in report.exercises[1].stage("tests").details
    assert report.exercises[1].status == "failed"
    assert len(test_runs("ex_c_test")) == 2, "a crash among others was not run again alone"
    assert report.exercises[2].stage("tests").details["among_others"] == "crashed"
    assert len(test_runs("ex_d_test")) == 2, "a failed leak check was not run again alone"
    assert report.exercises[3].stage("tests").details["among_others"] == "failed"
    assert report.exercises[3].status == "failed"  # it leaks alone too


def test_the_course_leak_checks_say_what_the_pipeline_looks_for():
    """Every leak check is course::testing::DeviceMemoryWatch, whose failures start with the
    one marker the test main recognises and reports as a failure kind the pipeline runs again
    alone; a check with a wording of its own would silently charge students for the
    neighbours' allocations."""
    header = (ROOT / "support" / "include" / "course" / "testing.h").read_text()
    [marker] = re.findall(r'kDeviceMemoryLeaked\[\] = "([^"]+)"', header)
    main = (ROOT / "support" / "src" / "gpu_test_main.cpp").read_text()
    assert "course::testing::kDeviceMemoryLeaked" in main
    for kind in pipeline.NEIGHBOURS_MAY_CAUSE:
        assert f'"{kind}"' in main, kind
    assert '"failure_kinds"' in main
    # The stand-in test main says the same of the marker.
    import fakes
    assert fakes._GTEST.count(f'"{marker}" in m') == 1
    for test in ("ch01_programming_model/error_handling/error_handling_test.cpp",
                 "ch05_constant_memory/readonly_texture/readonly_texture_test.cpp"):
        assert "DeviceMemoryWatch" in (ROOT / "chapters" / test).read_text(), test
    for test in sorted((ROOT / "chapters").glob("*/*/*_test.cpp")):
        own = re.findall(r'"[^"\n]*(?:leaked|less free)[^"\n]*"', test.read_text(),
                         re.IGNORECASE)
        assert own == [], f"{test.name} words a leak check of its own: {own}"


def test_one_exercise_runs_its_sanitizer_tools_at_once_beside_its_tests(course):
    """A re-grade of one exercise leaves workers idle: its sanitizer tools run side by side,
    and beside its tests. The whole course (more exercises than workers) runs them after."""
    def slow_everywhere(name):
        return [{"name": "Suite.one", "action": "sleep", "seconds": 0.4,
                 "action_under_sanitizer": "sleep"}, "Suite.two"]

    grader, timeline = make_grader(course, 4, slow_everywhere)
    tools = ("memcheck", "racecheck", "synccheck")
    grader.exercises = [dataclasses.replace(grader.exercises[0], sanitizer_tools=tools)]
    report = grader.run()
    assert report.exercises[0].status == "passed"
    assert report.exercises[0].stage("sanitizer").message == \
        "memcheck: clean; racecheck: clean; synccheck: clean"
    assert [s.name for s in report.exercises[0].stages][-3:] == ["tests", "sanitizer",
                                                                 "benchmark"]
    runs = [s for s in intervals(timeline) if s[0].endswith("_test")]
    assert len(runs) == 4  # the tests, then one per tool
    assert max(s[1] for s in runs) < min(s[2] for s in runs), "the runs did not overlap"
    assert grader.options.sanitizer_tools_at_once == 4 and grader.options.test_shards == 4


def test_a_sanitizer_started_beside_tests_that_time_out_is_ended_and_dropped(course):
    def hanging_tests(name):
        return [{"name": "Suite.one", "action": "hang", "action_under_sanitizer": "hang"}]

    grader, _ = make_grader(course, 4, hanging_tests)
    grader.exercises = [dataclasses.replace(grader.exercises[0], test_timeout_s=1.0,
                                            sanitizer_timeout_s=600.0)]
    started = time.monotonic()
    report = grader.run()
    assert time.monotonic() - started < 30  # not the sanitizer's 600 s
    stages = {s.name: s for s in report.exercises[0].stages}
    assert stages["tests"].status == "timed_out"
    assert "sanitizer" not in stages  # as when it never started: nothing it could check


def test_a_split_run_that_fails_among_its_shards_is_run_again_alone_in_one_process(course):
    """A case that fails only beside other processes (a free-memory check) fails among its own
    shards; the run again alone keeps every case in one process, and that is the verdict."""
    def crowded_by_siblings(name):
        # First, so that it runs while every other shard still runs its cases.
        return [{"name": "Suite.leaks", "action": "fail_when_crowded", "seconds": 0.3}] + \
            [{"name": f"Suite.case{i}", "action": "sleep", "seconds": 0.3} for i in range(7)]

    grader, timeline = make_grader(course, 8, crowded_by_siblings)
    grader.exercises = grader.exercises[:1]
    report = grader.run()
    tests = report.exercises[0].stage("tests")
    assert grader.options.test_shards == 4
    assert tests.status == "passed" and tests.details["among_others"] == "failed"
    tests_events = [e for e in events(timeline)
                    if e["who"].endswith("_test") and e["sanitizer"] is None]
    # Four shards, then the run alone, which starts after all of them ended, beside nothing.
    assert [e["event"] for e in tests_events][4:] == ["end"] * 4 + ["start", "end"]
    assert not tests_events[-2]["crowded"] and not tests_events[-1]["crowded"]
