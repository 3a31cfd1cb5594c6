"""grader batch with several students at once (--jobs) and on several GPUs (--gpus): the
students really overlap, each pinned to a GPU of its own, the gradebook is the one a sequential
batch writes, a stop ends every program and records nothing, bad --gpus is one line. Fake grade
functions and fake GPUs: no GPU needed."""

from __future__ import annotations

import os
import re
import shlex
import signal
import threading
import time

import pytest

from fakes import alive
from grader import batch, cli, model, proc, tools
from grader.errors import GraderError
from helpers import ROOT, assert_one_line_error, make_student
from test_batch import Grades, fake_report, gradebook, run_batch

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

GPUS = [model.GpuInfo(f"Fake GPU {i}", "9.0", "1", 1, uuid=f"GPU-fake-{i}", index=i)
        for i in range(3)]
ROSTER = ["alice", "bob", "carol", "dave", "eve"]


def class_of(tmp_path, size: int):
    folder = tmp_path / "class"
    for i in range(size):
        make_student(folder, f"s{i:02d}")
    return folder, [f"s{i:02d}" for i in range(size)]


class AtOnce(Grades):
    """Grades that count the students being graded at once, in all and per pinned GPU. The
    first `meet` of them wait for each other (a barrier), so that they overlap for sure."""

    def __init__(self, plan: dict, meet: int, hold_s: float = 0.05):
        super().__init__(plan)
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}  # pin_gpu -> students being graded on it
        self.most = self.most_per_gpu = self.started = 0
        self.meet = meet
        self.barrier = threading.Barrier(meet, timeout=10)
        self.hold_s = hold_s

    def __call__(self, student, options, progress):
        gpu = options.pin_gpu
        with self.lock:
            self.now[gpu] = self.now.get(gpu, 0) + 1
            self.most = max(self.most, sum(self.now.values()))
            self.most_per_gpu = max(self.most_per_gpu, self.now[gpu])
            first = self.started < self.meet
            self.started += 1
        try:
            if first:
                self.barrier.wait()  # BrokenBarrierError (a failed student) if they don't meet
            time.sleep(self.hold_s)
            return super().__call__(student, options, progress)
        finally:
            with self.lock:
                self.now[gpu] -= 1


def finished(lines: list[str]) -> list[tuple[str, str]]:
    """(student, "GPU n" or "") of the [i/N] lines, in order."""
    found = [re.match(r"\[\d+/\d+\] ([\w.-]+)(?: \((GPU \d+)\))?: ", line) for line in lines]
    return [(m[1], m[2] or "") for m in found if m]


@pytest.mark.parametrize("jobs", [2, 3])
def test_students_at_once_overlap_up_to_jobs(tmp_path, jobs):
    roster, ids = class_of(tmp_path, 8)
    grades = AtOnce({sid: (10 * i, 0.1 * i) for i, sid in enumerate(ids)}, meet=jobs)
    status, lines = run_batch(roster, tmp_path / "out", grades, jobs=jobs)
    assert status == 0
    assert grades.most == jobs
    assert sorted(grades.calls) == ids
    assert f"with seed 7, {jobs} at once; results in" in lines[0]
    assert sorted(finished(lines)) == [(sid, "") for sid in ids]  # one line each, no GPU
    assert [line.split("]")[0] for line in lines[1:-1]] == [f"[{i}/8" for i in range(1, 9)]
    assert "left (" in lines[1] and "done: 8 of 8 students graded" in lines[-1]
    assert all(row["status"] == "graded" for row in gradebook(tmp_path / "out").values())


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_student_is_pinned_to_a_gpu_of_its_own(tmp_path, jobs):
    roster, ids = class_of(tmp_path, 8)
    gpus = GPUS[:2]
    grades = AtOnce({sid: (50, 0.5) for sid in ids}, meet=2 * jobs)
    status, lines = run_batch(roster, tmp_path / "out", grades, gpus=gpus, jobs=jobs)
    assert status == 0
    assert grades.most == 2 * jobs and grades.most_per_gpu == jobs  # never more on one GPU
    assert {o.pin_gpu for o in grades.options.values()} == {g.uuid for g in gpus}
    assert f"{2 * jobs} at once on GPUs 0, 1; results in" in lines[0]
    graded = finished(lines)
    assert sorted(sid for sid, _ in graded) == ids
    for sid, where in graded:  # the line names the GPU the student's programs were pinned to
        gpu = gpus[int(where.split()[1])]
        assert grades.options[sid].pin_gpu == gpu.uuid
        assert f"on GPU {gpu.index} ({gpu.uuid})" in (tmp_path / "out" / "logs" /
                                                       f"{sid}.log").read_text()


def test_cli_pins_each_student_and_gives_the_grader_its_gpu(roster, tmp_path, monkeypatch,
                                                             capsys):
    monkeypatch.setattr(tools, "list_gpus", lambda: GPUS)
    monkeypatch.setattr(tools, "query_gpu", lambda: pytest.fail("--gpus lists the GPUs"))
    seen = []

    class FakeGrader:
        def __init__(self, options, exercises, progress, gpu):
            seen.append((options, gpu))
            self.options = options

        def run(self):
            return fake_report(self.options, 50, 0.5)

    monkeypatch.setattr(cli, "Grader", FakeGrader)
    out = tmp_path / "out"
    assert cli.main(["batch", str(roster), "--out", str(out), "-e", "vector_add",
                     "--gpus", "0,2", "-j", "2", "--compile-jobs", "3", "--seed", "4"]) == 0
    assert len(seen) == 5
    for options, gpu in seen:
        assert gpu.uuid == options.pin_gpu and gpu.index in (0, 2)
        assert options.jobs == 3  # --compile-jobs
    err = capsys.readouterr().err
    assert "4 at once on GPUs 0, 2" in err
    assert sorted(sid for sid, _ in finished(err.replace("grader: ", "").splitlines())) \
        == ROSTER


def test_the_time_left_counts_the_students_graded_at_once():
    tally = batch._Tally(total=10, at_once=3)
    graded = batch._Graded(batch.Student("s00", ROOT), "10/100 (10.0%)", 60.0, GPUS[1])
    assert tally.line(graded) == ("[1/10] s00 (GPU 1): 10/100 (10.0%) in 1m00s; about 3m00s "
                                  "left (1m00s a student)")  # 9 left, 3 at a time
    for _ in range(7):
        tally.line(graded)
    assert tally.line(graded).endswith("about 1m00s left (1m00s a student)")  # the last one


class Slow(Grades):
    """The first students take longest: they finish last."""

    def __call__(self, student, options, progress):
        time.sleep(max(0.0, 0.6 - 0.2 * ROSTER.index(student.id)))
        return super().__call__(student, options, progress)


def test_a_parallel_batch_writes_the_sequential_gradebook(roster, tmp_path):
    plan = {"alice": (100, 0.9), "bob": (72.5, 0.55), "carol": GraderError("it broke"),
            "dave": (0, 0.55), "eve": (33.333, 0.2)}
    one, many = tmp_path / "one", tmp_path / "many"
    assert run_batch(roster, one, Grades(plan))[0] == 1
    status, lines = run_batch(roster, many, Slow(plan), jobs=3)
    assert status == 1
    assert [sid for sid, _ in finished(lines)] != ROSTER  # they did finish out of order
    for name in ("gradebook.csv", "leaderboard.csv", "leaderboard.html"):
        assert (one / name).exists() == (many / name).exists()
        if (one / name).exists():
            assert (one / name).read_text() == (many / name).read_text(), name


# ------------------------------------------------------------------------------ stopping

def program(pid_file) -> list[str]:
    """A test program that runs until it is ended, saying its pid."""
    return ["sh", "-c", f"echo $$ > {shlex.quote(str(pid_file))}.tmp; "
            f"mv {shlex.quote(str(pid_file))}.tmp {shlex.quote(str(pid_file))}; exec sleep 30"]


class Hangs(Grades):
    """Students whose grade runs a program that only the stop ends, then does what a grade
    would next: 'returns' its report (made of ended programs), 'fails' (GraderError) or 'runs
    again' (proc.Stopped)."""

    def __init__(self, plan: dict, folder, then: dict[str, str]):
        super().__init__(plan)
        self.folder, self.then = folder, then

    def pid_files(self):
        return [self.folder / f"{sid}.pid" for sid in self.then]

    def __call__(self, student, options, progress):
        then = self.then.get(student.id)
        if then is not None:
            proc.run(program(self.folder / f"{student.id}.pid"), 60)
            if then == "fails":
                raise GraderError("configuring the build failed: meson was killed")
            if then == "runs again":
                proc.run(["true"], 60)
        return super().__call__(student, options, progress)


@pytest.fixture
def stop_when_running():
    """stop_when_running(pid_files): a kill (SIGTERM, which the batch takes for Ctrl-C) of this
    process once every program is running; the main thread gets it, as from a terminal."""
    previous = signal.signal(signal.SIGTERM, batch.interrupt)
    senders = []

    def start(pid_files):
        def send():
            deadline = time.monotonic() + 30
            while not all(f.exists() for f in pid_files):
                if time.monotonic() > deadline:
                    return  # the test fails on its own; no stray signal later
                time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGTERM)

        senders.append(threading.Thread(target=send, daemon=True))
        senders[-1].start()

    yield start
    for sender in senders:
        sender.join(timeout=60)
    signal.signal(signal.SIGTERM, previous)


def assert_stopped_cleanly(grades: Hangs, out, started: float) -> None:
    assert time.monotonic() - started < 20  # the programs were ended, not waited for (30 s)
    for pid_file in grades.pid_files():
        assert not alive(int(pid_file.read_text()))
    assert list((out / "failed").iterdir()) == []
    for sid in grades.then:
        assert (out / "logs" / f"{sid}.log").read_text().splitlines()[-1].endswith("interrupted")
    assert proc.run(["true"], 10).returncode == 0  # proc resumed


def test_a_stopped_parallel_batch_records_no_failure_and_resumes(roster, tmp_path,
                                                                 stop_when_running):
    out = tmp_path / "out"
    plan = {sid: (10, 0.1) for sid in ROSTER}
    grades = Hangs(plan, tmp_path, {"carol": "returns", "dave": "runs again"})
    stop_when_running(grades.pid_files())
    lines: list[str] = []
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_batch(roster, out, grades, jobs=2, lines=lines)
    assert lines[-1] == ("stopped during carol, dave: 2 of 5 graded in this run; the same "
                         "command resumes")
    assert "eve" not in grades.calls
    assert_stopped_cleanly(grades, out, started)
    assert [row["status"] for row in gradebook(out).values()] == \
        ["graded", "graded", "not graded yet", "not graded yet", "not graded yet"]

    grades = Grades(plan)
    status, lines = run_batch(roster, out, grades, jobs=2, seed_given=False)
    assert status == 0
    assert sorted(grades.calls) == ["carol", "dave", "eve"]
    assert "2 of 5 students already have a complete report" in lines[0]


def test_a_stopped_parallel_regrade_keeps_the_old_reports(roster, tmp_path, stop_when_running):
    out = tmp_path / "out"
    plan = {sid: (10, 0.1) for sid in ROSTER}
    run_batch(roster, out, Grades(plan))
    reports = {sid: (out / "reports" / f"{sid}.json").read_bytes() for sid in ROSTER}
    grades = Hangs({sid: (99, 0.9) for sid in ROSTER}, tmp_path,
                   {"alice": "fails", "bob": "returns", "carol": "runs again"})
    stop_when_running(grades.pid_files())
    lines: list[str] = []
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_batch(roster, out, grades, regrade=[batch.ALL_STUDENTS], gpus=GPUS, lines=lines)
    assert lines[-1] == ("stopped during alice (GPU 0), bob (GPU 1), carol (GPU 2): 0 of 5 "
                         "graded in this run; the same command resumes")
    assert_stopped_cleanly(grades, out, started)
    assert {sid: (out / "reports" / f"{sid}.json").read_bytes() for sid in ROSTER} == reports

    grades = Grades(plan)
    _, lines = run_batch(roster, out, grades, regrade=[batch.ALL_STUDENTS], gpus=GPUS)
    assert "resuming a --regrade of 5 students: 5 still to grade" in lines[0]
    assert sorted(grades.calls) == ROSTER


def test_a_grade_that_proc_refused_to_run_is_no_failure(roster, tmp_path):
    # proc.Stopped: the programs were stopped under the grade (the batch or the grade's own
    # parallel stages, on Ctrl-C); it stops the batch like Ctrl-C, not "the grader failed".
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_batch(roster, out, Grades({"alice": proc.Stopped("the grading was interrupted")}))
    assert list((out / "failed").iterdir()) == []
    assert "Traceback" not in (out / "logs" / "alice.log").read_text()


# ------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("flags, gpus, fragments", [
    (["--gpus", "2"], GPUS[:2], ["--gpus '2'", "no GPU 2", "nvidia-smi lists 0, 1"]),
    (["--gpus", ""], GPUS[:2], ["--gpus ''", "all or GPU indexes"]),
    (["--gpus", "0,,1"], GPUS[:2], ["all or GPU indexes"]),
    (["--gpus", "first"], GPUS[:2], ["all or GPU indexes"]),
    (["--gpus", "0,1,0"], GPUS[:2], ["GPU 0 is named twice"]),
    (["--gpus", "all"], [], ["--gpus", "no NVIDIA GPU found"]),
    (["--gpus", "0"], [], ["--gpus", "no NVIDIA GPU found"]),
    (["--gpus", "all", "--slurm"], GPUS, ["--gpus is not for --slurm"]),
    (["--gpus", "all", "--build-only"], GPUS, ["--gpus is not for --build-only"]),
    (["-j", "2", "--slurm"], GPUS, ["--jobs is not for --slurm"]),
    (["-j", "0"], GPUS, ["--jobs takes a positive number"]),
    (["--compile-jobs", "0"], GPUS, ["--compile-jobs takes a positive number"]),
])
def test_cli_bad_gpus_or_jobs_is_one_line_and_exit_2(roster, tmp_path, monkeypatch, capsys,
                                                      flags, gpus, fragments):
    monkeypatch.setattr(tools, "list_gpus", lambda: gpus)
    assert cli.main(["batch", str(roster), "--out", str(tmp_path / "out"), *flags]) == 2
    assert_one_line_error(capsys.readouterr().err, *fragments)
