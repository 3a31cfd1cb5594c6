"""Batch grading for instructors: many submissions, one after another or several at once
(--jobs, --gpus), into a gradebook.

OUT/
  reports/<student>.json         the student's report (written atomically: a report that is
                                 there and loads is complete)
  reports/<student>.html         the same report as a page with plots (only where jinja2 and
                                 matplotlib are installed)
  failed/<student>.json          why the student could not be graded (no report then)
  logs/<student>.log             progress lines, then the report as the terminal shows it, or
                                 the error
  builds/<student>/              the student's own build directory
  gradebook.csv, leaderboard.csv rebuilt from the reports after every student
  batch.json                     what a re-run must reuse: the seed, a fingerprint of the
                                 secret, a --regrade still under way

A re-run of the same command skips every student with a complete report, so a stopped batch
resumes where it was; --regrade grades students again (and resumes like the rest).

The roster is read by grader/batch_roster.py, batch.json kept by grader/batch_state.py, the
reports, failure records, gradebook and leaderboard written by grader/gradebook.py.

Several at once: worker threads grade the students the main thread hands them, in roster order,
each on a slot (a GPU with --gpus, its programs pinned to it); the main thread alone writes the
shared files (gradebook, leaderboard, batch.json) and the progress lines, and alone sees Ctrl-C.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grader import folder_lock, model, proc, render
from grader.batch_roster import Student, read_roster, submission_problem
from grader.batch_state import load_state, prepare_out, save_state, secret_fingerprint
from grader.errors import EXIT_INCOMPLETE, GraderError
from grader.gradebook import Book, number, summarise
from grader.manifest import Exercise
from grader.stages.common import GradeOptions

ALL_STUDENTS = "*"  # --regrade without a name
# 1: some student has no report, or with --build-only some student's files do not compile.
EXIT_ALL_GRADED, EXIT_SOME_FAILED = 0, 1
# The names the CLI, Slurm and the tests use: some live in the roster, state and gradebook
# modules above.
__all__ = ["ALL_STUDENTS", "Batch", "Book", "GradeFunction", "Student", "interrupt",
           "prepare_out", "read_roster", "select_gpus"]


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def interrupt(signum, frame):
    """A SIGTERM handler: kill stops like Ctrl-C (the running programs are ended, the files
    stay whole)."""
    raise KeyboardInterrupt


# ------------------------------------------------------------------------------ GPUs

def select_gpus(spec: str, available: list[model.GpuInfo]) -> list[model.GpuInfo]:
    """The GPUs --gpus names: `all` (every GPU nvidia-smi lists) or nvidia-smi indexes (0,1).
    GraderError, one line, for no GPU here, an unknown index, an empty item or a repeat."""
    if not available:
        raise GraderError("--gpus: no NVIDIA GPU found (nvidia-smi lists none)")
    if spec.strip() == "all":
        return list(available)
    by_index = {g.index: g for g in available}
    here = ", ".join(str(i) for i in by_index)
    chosen: list[model.GpuInfo] = []
    for item in (i.strip() for i in spec.split(",")):
        if not re.fullmatch(r"[0-9]+", item):
            raise GraderError(f"--gpus {spec!r}: give all or GPU indexes such as 0,1 "
                              f"(nvidia-smi lists {here})")
        gpu = by_index.get(int(item))
        if gpu is None:
            raise GraderError(f"--gpus {spec!r}: there is no GPU {item} (nvidia-smi lists "
                              f"{here})")
        if gpu in chosen:
            raise GraderError(f"--gpus {spec!r}: GPU {item} is named twice")
        chosen.append(gpu)
    return chosen


def _named(student: Student, gpu: model.GpuInfo | None) -> str:
    return f"{student.id} (GPU {gpu.index})" if gpu else student.id


# ------------------------------------------------------------------------------ the run

# grade(student, options, progress) -> Report; raises GraderError when it cannot grade.
GradeFunction = Callable[[Student, GradeOptions, Callable[[str], None]], model.Report]


@dataclass
class _Graded:
    """A student a worker has graded: how it went and how long it took."""
    student: Student
    outcome: str
    seconds: float
    gpu: model.GpuInfo | None


@dataclass
class _Tally:
    """The finished students' times: the [i/N] of the progress lines and the time left."""
    total: int
    at_once: int  # students graded at once
    times: list[float] = field(default_factory=list)

    def line(self, graded: _Graded) -> str:
        self.times.append(graded.seconds)
        done, mean = len(self.times), sum(self.times) / len(self.times)
        left = self.total - done
        # The students left go `at_once` at a time, or all at once at the end.
        eta = f"; about {_duration(mean * left / min(self.at_once, left))} left " \
              f"({_duration(mean)} a student)" if left else ""
        return f"[{done}/{self.total}] {_named(graded.student, graded.gpu)}: " \
               f"{graded.outcome} in {_duration(graded.seconds)}{eta}"


class Batch:
    """Grades the students in roster order, skipping those with a complete report: `jobs` at
    once, or with `gpus` `jobs` at once on each GPU, each student pinned to its GPU."""

    def __init__(self, students: list[Student], out: Path, exercises: list[Exercise],
                 options: GradeOptions, grade: GradeFunction, *,
                 regrade: list[str] | None = None, seed_given: bool = False,
                 say: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.monotonic,
                 gpus: list[model.GpuInfo] | None = None, jobs: int = 1):
        self.students = students
        self.book = Book(out)
        self.out = out
        self.exercises = exercises
        self.options = options  # the template: submission and build_dir are per student
        self.grade = grade
        self.regrade = regrade or []
        self.seed_given = seed_given  # --seed given: a re-run must not silently replace it
        self.say = say
        self.clock = clock
        self.gpus = gpus or []
        # A worker per slot; the GPUs' slots take turns, so that the first students spread
        # over every GPU.
        self.slots: list[model.GpuInfo | None] = \
            [self.gpus[i % len(self.gpus)] for i in range(len(self.gpus) * jobs)] \
            if self.gpus else [None] * jobs
        self._stopping = threading.Event()  # set by the main thread on Ctrl-C

    # -- what to grade

    def _pending_regrade(self, state: dict) -> list[str]:
        """Students to grade even with a report: those of --regrade, or of an earlier
        --regrade that was stopped before its end."""
        ids = {s.id for s in self.students}
        wanted = sorted(ids) if ALL_STUDENTS in self.regrade else sorted(set(self.regrade))
        unknown = [sid for sid in wanted if sid not in ids]
        if unknown:
            raise GraderError(f"--regrade {unknown[0]}: no such student in the roster")
        earlier = state.get("regrade") or {}
        if wanted and earlier.get("selection") != wanted:
            state["regrade"] = {"selection": wanted, "pending": wanted}
        elif earlier.get("pending"):
            self.say(f"resuming a --regrade of {len(earlier['selection'])} students: "
                     f"{len(earlier['pending'])} still to grade")
        return list((state.get("regrade") or {}).get("pending", []))

    def _check_seed_and_secret(self, state: dict) -> None:
        """A batch grades every student with the same inputs: a re-run reuses the first run's
        seed and must be given the same secret, unless it regrades everyone."""
        salt = state.get("salt") or os.urandom(8).hex()
        fingerprint = secret_fingerprint(self.options.secret, salt)
        if "seed" in state and ALL_STUDENTS not in self.regrade:
            if self.seed_given and self.options.seed != state["seed"]:
                raise GraderError(f"this batch grades with --seed {state['seed']}; give that "
                                  "seed, none, or --regrade to grade everyone with the new one")
            if fingerprint != state.get("secret"):
                started = ("with a different secret" if state.get("secret") and fingerprint
                           else "with a secret; give it again (--secret or COURSE_SECRET)"
                           if state.get("secret") else "without a secret")
                raise GraderError(f"this batch was started {started}: every student gets the "
                                  "same inputs (--regrade grades everyone again)")
            self.options = dataclasses.replace(self.options, seed=state["seed"])
        state.update({"seed": self.options.seed, "salt": salt, "secret": fingerprint})

    # -- the loop

    def plan(self) -> tuple[list[Student], list[str], dict]:
        """Settles the seed and secret (saved in batch.json) and returns the students to
        grade in roster order, those of a --regrade still pending, and the saved state."""
        state = load_state(self.out)
        self._check_seed_and_secret(state)
        pending = self._pending_regrade(state)
        save_state(self.out, state)
        todo = [s for s in self.students
                if s.id in pending or not self._complete(s.id)]
        again = [s.id for s in todo if self.book.summary(s.id) is not None
                 and s.id not in pending]
        incomplete = [sid for sid in again if self.book.summary(sid).incomplete]
        built_only = [sid for sid in again if sid not in incomplete]
        if incomplete:
            self.say(f"{len(incomplete)} students have an incomplete grade (a measurement was "
                     f"not taken: the GPU was busy): graded again ({_some(incomplete, 5)})")
        if built_only:
            self.say(f"{len(built_only)} students have a --build-only report, which measured "
                     f"nothing: graded in full ({_some(built_only, 5)})")
        done_before = len(self.students) - len(todo)
        if done_before:
            self.say(f"{done_before} of {len(self.students)} students already have a complete "
                     "report: skipped (--regrade [STUDENT] grades again)")
        return todo, pending, state

    def run(self) -> int:
        # One batch per OUT: a second one would grade the same students into the same build
        # folders and record each other's failures (grader/folder_lock.py).
        with folder_lock.out_folder(self.out, "grading a batch", self.say):
            return self._run()

    def _run(self) -> int:
        todo, pending, state = self.plan()
        self.book.rebuild(self.students, self.exercises)
        self.say(f"grading {len(todo)} students with seed {self.options.seed}"
                 + (" and a secret" if self.options.secret else "") + self._at_once()
                 + f"; results in {self.out}")
        tally = _Tally(len(todo), min(len(self.slots), len(todo)) or 1)
        upcoming = iter(todo)
        started: dict[Future, Student] = {}  # in roster order
        running: dict[Future, int] = {}  # not yet recorded: the slot each works on
        pool = ThreadPoolExecutor(max_workers=len(self.slots), thread_name_prefix="student")
        try:
            while True:
                # The main thread hands the students out, so that none starts after a stop.
                for slot in [i for i in range(len(self.slots)) if i not in running.values()]:
                    student = next(upcoming, None)
                    if student is None:
                        break
                    future = pool.submit(self._grade_timed, student, self.slots[slot])
                    started[future], running[future] = student, slot
                if not running:
                    break
                # In short waits, so that a signal reaches this thread.
                done, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
                for future in [f for f in started if f in done]:
                    graded = future.result()  # a KeyboardInterrupt of the worker's own too
                    del running[future]
                    self._record(graded, tally, pending, state)
        except BaseException as error:
            self._stop(list(started))
            pool.shutdown(wait=True)
            for future in [f for f in running if f.exception() is None]:  # done meanwhile
                self._record(future.result(), tally, pending, state)
            if isinstance(error, KeyboardInterrupt):
                cut = [_named(s, self.slots[running[f]]) for f, s in started.items()
                       if f in running and isinstance(f.exception(), KeyboardInterrupt)]
                self.say("stopped" + (f" during {', '.join(cut)}" if cut else "")
                         + f": {len(tally.times)} of {len(todo)} graded in this run; the same "
                         "command resumes")
            raise
        pool.shutdown(wait=True)
        missing = [s.id for s in self.students if self.book.summary(s.id) is None]
        incomplete = [s.id for s in self.students
                      if s.id not in missing and not self._complete(s.id)]
        unbuilt = [s.id for s in self.students
                   if s.id not in missing and self.book.summary(s.id).did_not_compile]
        self.say(f"done: {len(self.students) - len(missing)} of {len(self.students)} students "
                 + ("built" if self.options.build_only else "graded")
                 + (f"; could not grade {_some(missing, 10)}" if missing else "")
                 + (f"; {len(unbuilt)} do not compile: {_some(unbuilt, 10)}" if unbuilt else "")
                 + (f"; {len(incomplete)} incomplete (the GPU was busy: the same command "
                    f"grades them again): {_some(incomplete, 10)}" if incomplete else "")
                 + f"; gradebook {self.out / 'gradebook.csv'}")
        if missing or unbuilt:
            return EXIT_SOME_FAILED
        return EXIT_INCOMPLETE if incomplete else EXIT_ALL_GRADED

    def _complete(self, sid: str) -> bool:
        """A report that is there, whole, and final (every measurement taken); a build-only
        report is complete for a build-only batch only (it measured nothing)."""
        summary = self.book.summary(sid)
        return summary is not None and not summary.incomplete \
            and (not summary.build_only or self.options.build_only)

    def _at_once(self) -> str:
        """How the students are spread, for the first line ("" for one at a time)."""
        gpus = ", ".join(str(g.index) for g in self.gpus)
        return (f", {len(self.slots)} at once" if len(self.slots) > 1 else "") \
            + (f" on GPU{'s' if len(self.gpus) > 1 else ''} {gpus}" if self.gpus else "")

    def _grade_timed(self, student: Student, gpu: model.GpuInfo | None) -> _Graded:
        """A worker's task."""
        started = self.clock()
        outcome = self.grade_one(student, gpu=gpu)
        return _Graded(student, outcome, self.clock() - started, gpu)

    def _record(self, graded: _Graded, tally: _Tally, pending: list[str], state: dict) -> None:
        """On the main thread alone, one student at a time: the shared files and the line."""
        if graded.student.id in pending:
            pending.remove(graded.student.id)
            state["regrade"]["pending"] = pending
            if not pending:
                del state["regrade"]
            save_state(self.out, state)
        self.book.rebuild(self.students, self.exercises)
        self.say(tally.line(graded))

    def _stop(self, futures: list[Future]) -> None:
        """Ctrl-C reaches the main thread only: ends every program the workers have running
        and waits for them; what they were grading is not recorded (grade_one)."""
        self._stopping.set()
        try:
            proc.stop_all()
            while not all(f.done() for f in futures):
                wait(futures, timeout=0.5)
                # Again: a grade's own parallel stages call proc.resume() as they stop.
                proc.stop_all()
        finally:
            proc.resume()

    def grade_one(self, student: Student, build_dir: Path | None = None,
                  gpu: model.GpuInfo | None = None) -> str:
        """Grades one student, records the report or the failure; returns a line saying how
        it went. Only KeyboardInterrupt gets out, also for a grade the batch stopped (nothing
        recorded then). build_dir: where to build (default OUT/builds/<student>; a Slurm task
        builds on its node's scratch); gpu: the GPU its programs are pinned to."""
        with open(self.book.log_path(student.id), "w", encoding="utf-8") as log:
            def progress(message: str) -> None:
                log.write(f"{time.strftime('%H:%M:%S')} {message}\n")
                log.flush()

            progress(f"grading {student.id}: {student.submission}"
                     + (f" on GPU {gpu.index} ({gpu.uuid})" if gpu else ""))
            interrupted, failure = False, ""
            try:
                problem = submission_problem(student, self.exercises)
                if problem:
                    raise GraderError(problem)
                options = dataclasses.replace(
                    self.options, submission=student.submission.resolve(),
                    build_dir=(build_dir or self.book.build_dir(student.id)).resolve())
                if gpu is not None:
                    options = dataclasses.replace(options, pin_gpu=gpu.uuid)
                report = self.grade(student, options, progress)
            except (KeyboardInterrupt, proc.Stopped):
                interrupted = True
            except GraderError as error:
                failure = str(error)
            except Exception as error:  # a grader bug must not end the batch
                log.write(traceback.format_exc())
                failure = f"the grader failed: {type(error).__name__}: {error}"
            # Stopped by the batch: whatever it saw (programs ended by the stop) is no grade.
            if interrupted or self._stopping.is_set():
                progress("interrupted")
                raise KeyboardInterrupt
            if failure:
                return self._failed(student, failure, progress)
            self.book.record(student.id, report)
            log.write("\n" + render.terminal(report, log, verbose=True) + "\n")
            if report.options.get("build_only"):  # what compiled: it scores nothing
                return summarise(report).status
            return f"{number(report.score)}/{number(report.max_score)} " \
                   f"({report.percent:.1f}%)" + (f", incomplete: {len(report.incomplete)} not " \
                                                  "measured" if report.incomplete else "")

    def _failed(self, student: Student, reason: str, progress: Callable[[str], None]) -> str:
        reason = " ".join(reason.split())  # one line in the gradebook
        progress(f"failed to grade: {reason}")
        self.book.record_failure(student.id, reason)
        return f"failed to grade: {reason}"


def _some(names: list[str], at_most: int) -> str:
    return ", ".join(names[:at_most]) + (" ..." if len(names) > at_most else "")

