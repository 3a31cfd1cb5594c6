"""Grades on a shared GPU: graders take turns (grader/gpu_turns.py), foreign load is detected
around each measurement (grader/gpu_load.py) and a disturbed measurement is taken again or
reported as not measured (grader/stages/measured.py), never scored low or called cheating."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fakes import (FakeProbe, bench_data, fake_bench, fake_gtest, fake_sanitizer, fake_tool,
                   python_command)
from grader import gpu_turns, model, proc, tools
from grader.gpu_load import Disturbance, GpuProcess, LoadWatch, Look, SmiProbe, parse_compute_apps
from grader.stages import benchmark
from grader.stages.measured import ATTEMPTS, Alone
from helpers import ROOT, vector_add
from test_pipeline_stages import fake_tools  # noqa: F401 (a fixture)

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

UUID = "GPU-00000000-1111-2222-3333-444444444444"
HOG = GpuProcess(4242, "hog")


@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    folder = tmp_path / "locks"
    monkeypatch.setenv(gpu_turns.LOCK_DIR_ENV, str(folder))
    return folder


# A grader in another process: takes a turn, says when it has it, holds it for `hold` seconds.
_HOLDER = r'''
import signal, sys, time
# Started from a background job (as CI runs the tests) SIGINT comes ignored: Ctrl-C's own
# handler, as a grader in a terminal has it.
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {root!r})
from grader.gpu_turns import GpuTurns
turns = GpuTurns({uuid!r}, {submission!r}, progress=lambda m: print("WAIT", m, flush=True))
with getattr(turns, {how!r})({what!r}):
    print("HELD", time.time(), flush=True)
    time.sleep({hold})
print("RELEASED", time.time(), flush=True)
'''


def start_holder(lock_dir, how="alone", hold=30.0, uuid=UUID, what="the benchmark of x",
                 submission="/class/alice"):
    code = _HOLDER.format(root=str(ROOT), uuid=uuid, submission=submission, how=how,
                          what=what, hold=hold)
    env = dict(os.environ, **{gpu_turns.LOCK_DIR_ENV: str(lock_dir)})
    return subprocess.Popen(python_command(code), stdout=subprocess.PIPE, text=True, env=env)


def wait_for_line(process, prefix, timeout=20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith(prefix):
            return line
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"no {prefix!r} line from the holder")


def test_a_grader_waits_for_anothers_benchmark_and_says_whose_it_is(lock_dir):
    holder = start_holder(lock_dir, hold=1.5)
    try:
        wait_for_line(holder, "HELD")
        said = []
        turns = gpu_turns.GpuTurns(UUID, "/class/bob", progress=said.append)
        started = time.monotonic()
        with turns.shared("the tests of ch01/vector_add"):
            waited = time.monotonic() - started
        assert waited >= 0.8, "the shared turn did not wait for the exclusive one"
        assert said and said[0].startswith("waiting for the GPU")
        assert f"process {holder.pid}" in said[0] and "/class/alice" in said[0]
        assert "the benchmark of x of /class/alice" in said[0] and "; alone)" in said[0]
        assert any("the GPU is free" in line for line in said)
        assert turns.waited_s >= 0.8
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("held, wanted, uuid", [
    ("shared", "shared", UUID),           # tests of several graders share the GPU
    ("alone", "alone", "GPU-another"),    # graders on different GPUs never wait
])
def test_turns_that_do_not_wait(lock_dir, held, wanted, uuid):
    holder = start_holder(lock_dir, how=held, hold=20.0)
    try:
        wait_for_line(holder, "HELD")
        started = time.monotonic()
        with getattr(gpu_turns.GpuTurns(uuid, "/class/bob"), wanted)("the tests of y"):
            assert time.monotonic() - started < 2.0
    finally:
        holder.kill()
        holder.wait()


def test_a_benchmark_waits_for_the_tests_that_share_the_gpu(lock_dir):
    holder = start_holder(lock_dir, how="shared", hold=2.0)
    try:
        wait_for_line(holder, "HELD")
        said = []
        started = time.monotonic()
        with gpu_turns.GpuTurns(UUID, "/class/bob", progress=said.append).alone("bench"):
            assert time.monotonic() - started >= 0.5
        assert "the benchmark of x of /class/alice" in said[0] and "; shared)" in said[0]
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_of_a_killed_grader_is_taken_over_and_its_note_removed(lock_dir):
    holder = start_holder(lock_dir, hold=600.0)
    wait_for_line(holder, "HELD")
    notes = lock_dir / f"{UUID}.holders"
    assert len(list(notes.iterdir())) == 1
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    started = time.monotonic()
    turns = gpu_turns.GpuTurns(UUID, "/class/bob")
    with turns.alone("bench"):
        assert time.monotonic() - started < 2.0
        assert [h.pid for h in turns.holders()] == [os.getpid()]
    assert not list(notes.iterdir())


def test_a_waiting_benchmark_is_not_starved_by_a_stream_of_tests(lock_dir):
    """Shared users keep coming, each overlapping the next: the turnstile lets the exclusive
    one in once those already inside finish."""
    stop = threading.Event()

    def tester():
        turns = gpu_turns.GpuTurns(UUID, "/class/t")
        while not stop.is_set():
            with turns.shared("tests"):
                time.sleep(0.3)

    threads = [threading.Thread(target=tester) for _ in range(3)]
    for t in threads:
        t.start()
        time.sleep(0.1)
    try:
        started = time.monotonic()
        with gpu_turns.GpuTurns(UUID, "/class/b").alone("bench"):
            assert time.monotonic() - started < 5.0
    finally:
        stop.set()
        for t in threads:
            t.join()


def test_ctrl_c_while_waiting_ends_cleanly_and_holds_nothing(lock_dir):
    holder = start_holder(lock_dir, hold=600.0)
    waiter = None
    try:
        wait_for_line(holder, "HELD")
        waiter = start_holder(lock_dir, how="shared", hold=0, submission="/class/bob")
        wait_for_line(waiter, "WAIT")
        waiter.send_signal(signal.SIGINT)
        out, _ = waiter.communicate(timeout=10)
        assert waiter.returncode != 0 and "HELD" not in out
        assert [h.submission for h in gpu_turns.GpuTurns(UUID, "x").holders()] == ["/class/alice"]
    finally:
        holder.kill()
        holder.wait()
        if waiter is not None and waiter.poll() is None:
            waiter.kill()


def test_a_thread_waiting_gives_up_when_the_grade_is_stopped(lock_dir):
    holder = start_holder(lock_dir, hold=600.0)
    outcome = {}
    try:
        wait_for_line(holder, "HELD")

        def wait():
            try:
                with gpu_turns.GpuTurns(UUID, "/class/bob").shared("tests"):
                    outcome["held"] = True
            except proc.Stopped:
                outcome["stopped"] = True

        thread = threading.Thread(target=wait)
        thread.start()
        time.sleep(0.5)
        proc.stop_all()
        thread.join(5)
        assert outcome == {"stopped": True}
    finally:
        proc.resume()
        holder.kill()
        holder.wait()


def test_the_lock_folder_is_shared_by_every_user(lock_dir):
    with gpu_turns.GpuTurns(UUID, "/class/bob").shared("tests"):
        pass
    assert lock_dir.stat().st_mode & 0o7777 == 0o1777
    assert (lock_dir / f"{UUID}.gpu").stat().st_mode & 0o777 == 0o666


# ------------------------------------------------------------------------------ load probes

def test_nvidia_smi_compute_apps_are_read():
    text = "4242, /usr/bin/python3\n17, ./hog\nNo running processes found\n"
    assert parse_compute_apps(text) == [GpuProcess(4242, "python3"), GpuProcess(17, "hog")]
    answers = {"--query-compute-apps=pid,process_name": "4242, /opt/hog\n",
               "--query-gpu=utilization.gpu": "87\n"}
    probe = SmiProbe(UUID, run=lambda args: answers[args[0]])
    assert probe.look() == Look([GpuProcess(4242, "hog")], 87)
    assert probe.active({4242}, 0.0) is None


def test_an_idle_foreign_context_is_not_load_but_a_computing_one_is():
    idle = LoadWatch(FakeProbe([Look([HOG], 0)], active=set()), sleep=lambda s: None)
    assert idle.busy_now() is None
    busy = LoadWatch(FakeProbe([Look([HOG], 90)], active={4242}), sleep=lambda s: None)
    assert busy.busy_now().describe() == "the GPU was busy with process 4242 (hog)"
    # nvidia-smi cannot tell: a foreign process counts as busy
    unknown = LoadWatch(FakeProbe([Look([HOG], 0)], active=None), sleep=lambda s: None)
    assert unknown.busy_now() is not None


def test_utilisation_without_a_process_in_sight_counts_only_when_it_holds():
    fading = LoadWatch(FakeProbe([Look([], 30), Look([], 0)]), sleep=lambda s: None)
    assert fading.busy_now() is None  # the grader's own last program, still in the sample
    unseen = LoadWatch(FakeProbe([Look([], 80), Look([], 75)]), sleep=lambda s: None)
    assert "75% busy with work of a process this grader cannot see" in \
        unseen.busy_now().describe()


def test_a_measurement_is_disturbed_by_a_process_seen_around_it_that_computed():
    watch = LoadWatch(FakeProbe([Look([HOG], 50), Look([HOG], 50)], active={4242}),
                      sleep=lambda s: None)
    watch.start()
    assert watch.disturbance() == Disturbance([HOG])
    quiet = LoadWatch(FakeProbe([Look([], 0)], active=set()), sleep=lambda s: None)
    quiet.start()
    assert quiet.disturbance() is None


def test_the_measured_program_still_listed_a_moment_after_it_ended_is_not_foreign():
    own = GpuProcess(999, "vector_add_bench")
    probe = FakeProbe([Look([], 0), Look([own], 100), Look([own], 100), Look([], 0)],
                      active={999})
    watch = LoadWatch(probe, sleep=lambda s: None)
    watch.start()
    assert watch.disturbance() is None
    arrived = FakeProbe([Look([], 0), Look([HOG], 100)], active={4242})
    watch = LoadWatch(arrived, sleep=lambda s: None)
    watch.start()
    assert watch.disturbance() == Disturbance([HOG]), "a process that came and stays counts"


# ------------------------------------------------------------------------------ measuring alone

class ScriptedWatch:
    """A LoadWatch whose busy_now and disturbance answers are scripted."""

    def __init__(self, busy=(), disturbed=()):
        self.busy = list(busy)
        self.disturbed = list(disturbed)
        self.starts = 0

    def busy_now(self):
        return self.busy.pop(0) if self.busy else None

    def start(self):
        self.starts += 1

    def disturbance(self):
        return self.disturbed.pop(0) if self.disturbed else None


def alone(watch, **options):
    said = []
    clock = [0.0]

    def sleep(seconds):
        clock[0] += seconds

    return Alone(None, watch, said.append, sleep=sleep, clock=lambda: clock[0], **options), said


def test_an_undisturbed_measurement_is_taken_once():
    runner, _ = alone(ScriptedWatch())
    measured = runner.measure("b", lambda: "result")
    assert (measured.result, measured.attempts, measured.not_measured) == ("result", 1, False)


def test_a_disturbed_measurement_is_taken_again():
    hog = Disturbance([HOG])
    runner, said = alone(ScriptedWatch(disturbed=[hog, hog, None]))
    runs = iter(["first", "second", "third"])
    measured = runner.measure("the benchmark of v", lambda: next(runs))
    assert measured.result == "third" and measured.attempts == 3 and not measured.not_measured
    assert "the GPU was busy with process 4242 (hog); measuring again (2/3)" in said[0]
    assert runner.disturbed == 2 and runner.gave_up == 0


def test_a_gpu_that_stays_busy_leaves_the_metric_not_measured():
    hog = Disturbance([HOG])
    runner, said = alone(ScriptedWatch(busy=[hog] * 100))
    ran = []
    measured = runner.measure("the benchmark of v", lambda: ran.append(1))
    assert measured.not_measured and measured.result is None and not ran
    assert said[-1] == "the benchmark of v: not measured: the GPU was busy with process 4242 (hog)"
    assert "waiting up to 20 s" in said[0]
    # Once a measurement was given up, the next ones wait only briefly for the load to go.
    runner.measure("the benchmark of w", lambda: None)
    assert any("waiting up to 3 s" in line for line in said)


def test_the_gpu_freed_while_waiting_is_measured():
    runner, said = alone(ScriptedWatch(busy=[Disturbance([HOG])] * 3))
    measured = runner.measure("b", lambda: "result")
    assert measured.result == "result" and not measured.not_measured
    assert "waiting up to 20 s" in said[0]


def test_a_timing_verdict_is_given_only_when_a_second_measurement_shows_it():
    runner, said = alone(ScriptedWatch())
    runs = iter(["slow", "fine"])
    measured = runner.measure("b", lambda: next(runs), suspect=lambda r: r == "slow")
    assert measured.result == "fine" and not measured.confirmed
    assert "measuring again before saying so" in said[0]
    runner, _ = alone(ScriptedWatch())
    measured = runner.measure("b", lambda: "slow", suspect=lambda r: r == "slow")
    assert measured.result == "slow" and measured.confirmed and measured.attempts == 2


def test_a_timing_verdict_seen_only_while_disturbed_is_not_given():
    hog = Disturbance([HOG])
    runner, _ = alone(ScriptedWatch(disturbed=[hog] * ATTEMPTS))
    measured = runner.measure("b", lambda: "slow", suspect=lambda r: True)
    assert measured.not_measured and not measured.confirmed


def test_allow_shared_gpu_keeps_a_disturbed_measurement_and_marks_it():
    runner, _ = alone(ScriptedWatch(disturbed=[Disturbance([HOG])]), allow_shared=True)
    measured = runner.measure("b", lambda: "result")
    assert measured.result == "result" and measured.shared and not measured.not_measured


# ------------------------------------------------------------------------------ in a grade

GPU = model.GpuInfo("Fake GPU", "9.0", "555", 80000, uuid=UUID, index=0)


@pytest.fixture
def grade(grader_for, fake_tools, tmp_path):
    """grade(cases, bench_sequence=[reports], **grader options) -> ExerciseResult of
    vector_add, with a passing build, a clean fake sanitizer and a fake benchmark that
    answers one report per run."""
    fake_tools["ninja"] = str(fake_tool(tmp_path / "bin" / "ninja"))
    fake_tools["compute-sanitizer"] = str(
        fake_sanitizer(tmp_path / "bin" / "compute-sanitizer", tmp_path / "san.log"))

    def go(cases, *, gpu=GPU, bench_sequence=None, **options):
        ex = vector_add(test_timeout_s=5.0)
        g = grader_for(ex, gpu=gpu, **options)
        fake_gtest(g.options.build_dir / f"{ex.name}_test", cases)
        fake_bench(g.options.build_dir / f"{ex.name}_bench",
                   sequence=bench_sequence or [bench_data(900, 1000)])
        return g.grade_exercise(ex)

    return go


@pytest.fixture
def probe(monkeypatch, lock_dir):
    """The probe every grader of the test gets: `probe.looks` to script it."""
    fake = FakeProbe([Look([], 0)], active=set())
    monkeypatch.setattr("grader.gpu_load.probe_for", lambda uuid: fake)
    monkeypatch.setattr("grader.stages.measured.FIRST_WAIT_S", 0.0)
    monkeypatch.setattr("grader.stages.measured.POLL_S", 0.0)
    return fake


def test_a_benchmark_on_a_busy_gpu_is_not_measured_and_the_grade_incomplete(grade, probe):
    probe.looks = [Look([HOG], 95)]
    probe.active_pids = {4242}
    result = grade(["Small/VectorAdd.MatchesReference/n_1"], gpu=GPU)
    assert result.status == "incomplete"
    bench = result.stage("benchmark")
    assert bench.status == "not_measured" and bench.points == 0
    assert bench.metrics[0].message == "not measured: the GPU was busy with process 4242 (hog)"
    assert "grade incomplete" in result.message and "withheld" in result.message
    assert result.stage("tests").points == result.stage("tests").max_points


def test_a_quiet_gpu_grades_as_before_and_records_the_turns(grade, probe):
    result = grade(["Small/VectorAdd.MatchesReference/n_1"], gpu=GPU)
    assert result.status == "passed"
    assert result.stage("benchmark").details["attempts"] == 1


def test_a_timing_accusation_that_does_not_hold_again_is_dropped(grade, probe, tmp_path):
    suspect = bench_data(900, 1000, valid=False, problem="the call took 5 ms of wall time "
                         "but only 0.1 ms on its stream: work ran on the host or outside "
                         "the stream")
    suspect["measurements"][1]["timing_only"] = True
    result = grade(["Small/VectorAdd.MatchesReference/n_1"], gpu=GPU,
                   bench_sequence=[suspect, bench_data(900, 1000)])
    assert result.status == "passed", result.message
    assert result.stage("benchmark").details["attempts"] == 2


def test_a_timing_accusation_that_holds_again_is_given_and_says_so(grade, probe):
    suspect = bench_data(900, 1000, valid=False, problem="work ran on the host or outside "
                         "the stream")
    suspect["measurements"][1]["timing_only"] = True
    result = grade(["Small/VectorAdd.MatchesReference/n_1"], gpu=GPU, bench_sequence=[suspect])
    bench = result.stage("benchmark")
    assert bench.points == 0 and bench.details["confirmed"] is True
    assert "seen on two measurements with nothing else on the GPU" in bench.metrics[0].message


def test_a_proven_problem_is_not_measured_again(grade, probe):
    proven = bench_data(900, 1000, valid=False, problem="the output was written while the "
                        "benchmark's stream was held")
    result = grade(["Small/VectorAdd.MatchesReference/n_1"], gpu=GPU, bench_sequence=[proven])
    assert result.stage("benchmark").details["attempts"] == 1
    assert result.stage("benchmark").points == 0


def test_allow_shared_gpu_scores_a_disturbed_measurement_and_marks_it(grade, probe):
    probe.looks = [Look([HOG], 95)]
    probe.active_pids = {4242}
    result = grade(["Small/VectorAdd.MatchesReference/n_1"], gpu=GPU, allow_shared_gpu=True)
    bench = result.stage("benchmark")
    assert result.status == "passed" and bench.points == bench.max_points
    assert bench.details["shared_gpu"] == "the GPU was busy with process 4242 (hog)"
    assert "--allow-shared-gpu" in bench.metrics[0].message


def test_the_gpu_of_cuda_visible_devices_is_the_one_graded_and_locked():
    text = ("0, GPU-aaaa, NVIDIA H100 80GB HBM3, 9.0, 580.1, 81559\n"
            "1, GPU-bbbb, NVIDIA H100 80GB HBM3, 9.0, 580.1, 81559\n")
    gpus = tools.parse_gpu_list(text)
    assert [g.uuid for g in gpus] == ["GPU-aaaa", "GPU-bbbb"] and gpus[1].index == 1
    assert tools.visible_gpu(gpus, None).uuid == "GPU-aaaa"
    assert tools.visible_gpu(gpus, "1").uuid == "GPU-bbbb"
    assert tools.visible_gpu(gpus, "GPU-bbbb,0").uuid == "GPU-bbbb"
    assert tools.visible_gpu(gpus, "bbbb").uuid == "GPU-bbbb"
    assert tools.visible_gpu(gpus, "7") is None and tools.visible_gpu(gpus, "") is None


def test_once_a_measured_program_is_seen_a_busy_reading_without_a_process_is_the_graders_own(
        monkeypatch):
    monkeypatch.setattr("grader.gpu_load.PEEK_AFTER_S", 0.05)
    own = GpuProcess(999, "reduce_bench")
    probe = FakeProbe([Look([], 0), Look([own], 100), Look([], 100)], active=set())
    watch = LoadWatch(probe, sleep=lambda s: None)
    assert not watch.sees_processes
    watch.start()
    time.sleep(0.5)  # the measurement runs; the look during it sees the program
    watch.disturbance()
    assert watch.sees_processes
    assert watch.busy_now() is None  # 100% with no process listed: its own program fading


def test_waiting_for_the_graders_own_programs_is_quiet_and_not_counted(lock_dir, monkeypatch):
    """An exercise of this grade that runs alone holds up the grade's other workers: nothing
    to tell the student, and no time waited for other graders."""
    monkeypatch.setattr(gpu_turns, "FIRST_REPORT_S", 0.1)
    said = []
    turns = gpu_turns.GpuTurns(UUID, "/class/bob", progress=said.append)
    waited = []

    def worker():
        started = time.monotonic()
        with turns.shared("the tests of x"):
            waited.append(time.monotonic() - started)

    with turns.alone("the tests of ch06/event_dependencies"):
        thread = threading.Thread(target=worker)
        thread.start()
        time.sleep(0.6)
    thread.join(5)
    assert waited and waited[0] >= 0.5
    assert said == [] and turns.waited_s == 0.0
