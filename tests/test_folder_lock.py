"""One grader per folder (grader/folder_lock.py): two real graders on one build folder run one
after the other, the second saying whom it waits for; a killed holder frees the folder; a
second batch on one --out is refused, naming the first."""

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

from fakes import alive, python_command, write_script
from grader import folder_lock, gpu_turns, model
from grader.errors import GraderError
from helpers import ROOT, TESTS, make_student

# Grader logic on stand-ins: the student template reads the same files, so the course's run
# stands for the template's (tests/test_template_command.py).
pytestmark = pytest.mark.same_in_template

# A stand-in grader: the real Grader.run with stand-in meson and ninja (bin_dir), building
# only (no GPU); its progress lines go to stderr; its report to the path given.
GRADER = r'''
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path[:0] = [{root!r}, {tests!r}]
from pathlib import Path
from grader import manifest, model, render, tools
from grader.pipeline import Grader
from grader.stages import integrity
from grader.stages.common import GradeOptions
from helpers import VECTOR_ADD
bin_dir, submission, build, report, seed = sys.argv[1:6]
tools.find = lambda name, required_for="": (os.path.join(bin_dir, name)
                                            if name in ("meson", "ninja") else None)
integrity.run = lambda options, ex: model.StageResult("integrity", model.StageStatus.PASSED)
options = GradeOptions(root=Path({root!r}), submission=Path(submission), build_dir=Path(build),
                       seed=int(seed), build_only=True)
result = Grader(options, [manifest.load_manifest(VECTOR_ADD)],
                lambda m: print("grader:", m, file=sys.stderr, flush=True)).run()
render.write_json(result, Path(report))
'''

# A stand-in meson or ninja: logs its start and end (with the grader that ran it) in the
# timeline, and takes $FAKE_TOOL_SECONDS (default: its config's) in between.
TOOL = r'''
import json, os, sys, time
cfg = json.load(open(os.path.abspath(__file__) + ".json"))
def log(event):
    with open(cfg["timeline"], "a") as f:
        f.write(json.dumps({"grader": os.getppid(), "pid": os.getpid(), "event": event,
                            "tool": os.path.basename(__file__), "t": time.time()}) + "\n")
log("start")
time.sleep(float(os.environ.get("FAKE_TOOL_SECONDS") or cfg["seconds"]))
log("end")
'''


@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    folder = tmp_path / "locks"
    monkeypatch.setenv(gpu_turns.LOCK_DIR_ENV, str(folder))
    return folder


class Course:
    """A submission, its build folder, stand-in tools logging to a timeline, and a way to
    start stand-in graders on them."""

    def __init__(self, tmp_path: Path, lock_dir: Path):
        self.tmp = tmp_path
        self.submission = make_student(tmp_path / "class", "alice")
        self.build = tmp_path / "build"
        self.timeline = tmp_path / "timeline.log"
        self.bin = tmp_path / "bin"
        for name in ("meson", "ninja"):
            write_script(self.bin / name, TOOL, {"timeline": str(self.timeline),
                                                 "seconds": 0.5})
        self.script = tmp_path / "stand_in_grader.py"
        self.script.write_text(GRADER.format(root=str(ROOT), tests=str(TESTS)))
        self.env = dict(os.environ, **{gpu_turns.LOCK_DIR_ENV: str(lock_dir)})
        self.started: list[subprocess.Popen] = []

    def start(self, name: str, seed: int, tool_seconds: float | None = None) -> subprocess.Popen:
        env = dict(self.env, FAKE_TOOL_SECONDS=str(tool_seconds or ""))
        err = open(self.tmp / f"{name}.err", "w")
        process = subprocess.Popen(
            [sys.executable, str(self.script), str(self.bin), str(self.submission),
             str(self.build), str(self.tmp / f"{name}.json"), str(seed)],
            stdout=subprocess.DEVNULL, stderr=err, env=env)
        err.close()
        self.started.append(process)
        return process

    def err(self, name: str) -> str:
        return (self.tmp / f"{name}.err").read_text()

    def events(self) -> list[dict]:
        if not self.timeline.exists():
            return []
        return [json.loads(line) for line in self.timeline.read_text().splitlines()]

    def wait_for(self, condition, what: str, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.05)

    def running_tool(self, grader: subprocess.Popen) -> bool:
        return any(e["grader"] == grader.pid and e["event"] == "start" for e in self.events())

    def cleanup(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.kill()
                process.wait()
        for event in self.events():  # a killed grader's tool lives on in its own session
            if event["event"] == "start" and alive(event["pid"]):
                os.kill(event["pid"], signal.SIGKILL)


@pytest.fixture
def course(tmp_path, lock_dir):
    made = Course(tmp_path, lock_dir)
    yield made
    made.cleanup()


def test_two_graders_of_one_build_folder_take_turns_and_the_second_names_the_first(course):
    # The first's tools take 3 s each, so that the second, however slowly it starts on a busy
    # machine, finds the folder held (in CI, with 0.5 s, the first once ended before the
    # second looked).
    first = course.start("first", seed=1, tool_seconds=3)
    course.wait_for(lambda: course.running_tool(first), "the first grader never configured")
    second = course.start("second", seed=2)
    assert first.wait(timeout=60) == 0, course.err("first")
    assert second.wait(timeout=60) == 0, course.err("second")

    # Every program of the first ran and ended before the second's first one started.
    events = course.events()
    mine = {p.pid: [e for e in events if e["grader"] == p.pid] for p in (first, second)}
    assert mine[first.pid] and mine[second.pid]
    assert max(e["t"] for e in mine[first.pid]) < min(e["t"] for e in mine[second.pid])
    order = [e["grader"] for e in sorted(events, key=lambda e: e["t"])]
    assert order == sorted(order, key=lambda pid: pid != first.pid)  # never interleaved

    # The second said whom it waited for: process, user, what, since when, the command.
    waiting = [line for line in course.err("second").splitlines()
               if "waiting for the build folder" in line]
    assert waiting, course.err("second")
    line = waiting[0]
    for fragment in (str(course.build), f"process {first.pid} of {gpu_turns._user()}",
                     f"grading {course.submission}", "since ", "stand_in_grader.py",
                     "this grade starts when it ends"):
        assert fragment in line, (fragment, line)
    assert "the build folder is free" in course.err("second")
    # Each report is its own run's, whole.
    for name, seed in (("first", 1), ("second", 2)):
        report = model.Report.load(course.tmp / f"{name}.json")
        assert report.seed == seed and report.finished_at
    assert "waiting" not in course.err("first")


def test_a_killed_holder_frees_the_build_folder(course):
    # The first grader's configure never ends; killed with SIGKILL (no handler, no clean-up
    # of its own), its lock goes with it and the waiting grader goes on.
    first = course.start("first", seed=1, tool_seconds=120)
    course.wait_for(lambda: course.running_tool(first), "the first grader never configured")
    second = course.start("second", seed=2)
    course.wait_for(lambda: "waiting for the build folder" in course.err("second"),
                    "the second grader did not wait")
    assert second.poll() is None
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert second.wait(timeout=60) == 0, course.err("second")
    assert "the build folder is free" in course.err("second")
    assert model.Report.load(course.tmp / "second.json").finished_at
    # And a third, after them, finds the folder free at once.
    third = course.start("third", seed=3)
    assert third.wait(timeout=60) == 0
    assert "waiting" not in course.err("third")


# A holder in another process: takes the folder (build or out), says so, holds it.
HOLDER = r'''
import sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from grader import folder_lock
held = (folder_lock.build_folder(Path({folder!r}), "/class/bob") if {kind!r} == "build"
        else folder_lock.out_folder(Path({folder!r}), "grading a batch"))
with held:
    print("HELD", flush=True)
    time.sleep({hold})
'''


def start_holder(folder: Path, kind: str, hold: float = 30.0) -> subprocess.Popen:
    code = HOLDER.format(root=str(ROOT), folder=str(folder), kind=kind, hold=hold)
    holder = subprocess.Popen(python_command(code), stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "HELD"
    return holder


def test_a_second_batch_on_one_out_is_refused_naming_the_first(tmp_path, lock_dir):
    out = tmp_path / "out"
    out.mkdir()
    holder = start_holder(out, "out")
    try:
        with pytest.raises(GraderError) as refused:
            with folder_lock.out_folder(out, "grading a batch"):
                pass
        message = str(refused.value)
        assert "\n" not in message
        for fragment in (f"--out {out} is in use by process {holder.pid} of "
                         f"{gpu_turns._user()}", "grading a batch since ", "ago): -c; one batch",
                         f"(kill {holder.pid})", "one batch per --out"):
            assert fragment in message, (fragment, message)
    finally:
        holder.kill()
        holder.wait()
    # Its process gone, the lock went with it.
    with folder_lock.out_folder(out, "grading a batch"):
        note = json.loads((out / folder_lock.OUT_NOTE).read_text())
        assert note["pid"] == os.getpid()
    assert not (out / folder_lock.OUT_NOTE).exists()


def test_the_lock_outlives_a_wipe_of_the_build_folder(tmp_path, lock_dir):
    """meson setup --wipe empties the build folder during a grade: a lock file in it would go,
    and the next grader would take a new one; the folder's own lock stays."""
    build = tmp_path / "build"
    build.mkdir()
    holder = start_holder(build, "build")
    try:
        for item in build.iterdir():  # what a wipe leaves: nothing
            item.unlink()
        said = []
        waiter = threading.Thread(target=lambda: _take_briefly(build, said))
        waiter.start()
        time.sleep(1.0)
        assert waiter.is_alive() and said and "waiting for the build folder" in said[0]
        assert f"process {holder.pid}" in said[0] and "grading /class/bob" in said[0]
    finally:
        holder.kill()
        holder.wait()
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert said[-1].startswith("the build folder is free")
    assert list(build.iterdir()) == []  # nothing of the lock's in the folder


def _take_briefly(folder: Path, said: list) -> None:
    with folder_lock.build_folder(folder, "/class/alice", said.append):
        pass


def test_the_holding_thread_takes_its_folder_again_and_another_thread_waits(tmp_path,
                                                                           lock_dir):
    build = tmp_path / "build"
    build.mkdir()
    said, entered = [], threading.Event()

    def other() -> None:
        with folder_lock.build_folder(build, "/class/bob", said.append):
            entered.set()

    with folder_lock.build_folder(build, "/class/alice"):
        # The command line may hold the folder around Grader.run, which takes it too.
        with folder_lock.build_folder(build, "/class/alice"):
            pass
        thread = threading.Thread(target=other)
        thread.start()
        assert not entered.wait(0.8)
        assert said and f"process {os.getpid()}" in said[0] and "grading /class/alice" in said[0]
    thread.join(timeout=10)
    assert entered.is_set()


def test_the_holders_note_reads_as_a_person_would_want(monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(ROOT / "grader" / "__main__.py"), "grade",
                                      "my work"])
    assert folder_lock.command_line() == "python3 -m grader grade 'my work'"
    now = time.time()
    here = folder_lock.Holder(42, "alice", folder_lock.socket.gethostname(),
                              "python3 -m grader grade", "grading /w", now - 150)
    text = here.describe(now)
    assert text.startswith("process 42 of alice, grading /w since ")
    assert text.endswith("(2 min ago): python3 -m grader grade")
    elsewhere = folder_lock.Holder(42, "alice", "login2", "c", "w", now - 5)
    assert "of alice on login2," in elsewhere.describe(now)
