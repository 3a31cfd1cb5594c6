"""Grading a class on a Slurm cluster: python3 -m grader batch ROSTER --out DIR --slurm.

The submitting command settles what a local batch settles (the roster, the seed, the secret's
fingerprint, who still needs grading), then writes and submits one job array: task i grades
the students listed for it, each in a build directory on its node's scratch, with a compiler
cache shared by the tasks of that node, and writes their reports into the shared OUT. A job
that depends on the whole array (afterany) merges: it rebuilds the gradebook from the reports
and names every task that failed, ran out of time, was preempted or cancelled; the students
it left without a report are recorded as not graded, with that reason. Submitting the same
command again sends only the students still without a complete report.

OUT/ holds the batch layout (grader/batch.py) and
  slurm/rounds.json             one entry per submission: its array and merge job ids
  slurm/round-<n>/tasks.json    what the tasks grade: the students of each task, the options
  slurm/round-<n>/task.sbatch   the job array's script; merge.sbatch the merge job's
  slurm/round-<n>/logs/         Slurm's output: task-<i>.out, merge.out
  slurm/round-<n>/ended/<i>.json  written by task i as it ends: how each student went, or
                                the signal that stopped it
  slurm/round-<n>/merge.json    the merge's findings; slurm/summary.txt the same for people

This module plans and submits a round and runs a task; the round's files and scripts are
grader/slurm_scripts.py's, the scheduler's commands grader/slurm_queue.py's, a task's clean-up
grader/slurm_cleanup.py's and the merge grader/slurm_merge.py's.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import signal
import socket
import sys
from pathlib import Path
from typing import Callable

from grader import batch, binary, folder_lock, manifest, model, sandbox
from grader.batch_roster import Student, submission_problem
from grader.batch_state import save_state, write_atomically
from grader.errors import GraderError
from grader.gradebook import FAILED_PREFIX
from grader.manifest import Exercise
from grader.slurm_cleanup import remove_scratch
from grader.slurm_merge import EXIT_ALL_GRADED, EXIT_SOME_NOT_GRADED, count, merge
from grader.slurm_queue import job_id, run, still_queued
from grader.slurm_scripts import (SlurmSettings, load_round, load_rounds, merge_script,
                                  round_dir, save_rounds, slurm_dir, slurm_time, task_script)
from grader.stages import build, tests
from grader.stages.common import SECRET_ENV, GradeOptions

# The names the CLI calls, some of them living in the modules above.
__all__ = ["SlurmSettings", "load_round", "merge", "remove_scratch", "run_task", "submit"]

# The task script's own start and Python's, around the grading itself.
MARGIN_S = 300
# What one student costs, measured (docs/grading_time.md, "Less to run"): a full grade of the
# reference solutions, all 53 exercises with the sanitizer and the benchmarks, on an NVIDIA H100
# 80GB HBM3 with 16 cores, CUDA 13.0, driver 580.159.04, 2026-11-26 (seed 407452424), on a
# fresh machine: 209 s, of which configure 7 s and the build 34 s (no compiler cache yet), the
# checks after the build 81 s, the benchmarks and ceilings 87 s. The solutions cost the most:
# benchmarks run only where the tests and the sanitizer pass (a skeleton's grade took 164 s).
MEASURED_BUILD_S = 7 + 34
MEASURED_GRADE_S = 81 + 87
# The default time limit is this many times the measured cost: room for a slower GPU, a node
# with half the cores (its build and checks take about twice as long), a busy shared file
# system, every task's compiler cache cold.
COST_MARGIN = 3


# ------------------------------------------------------------------------------ planning

def worst_case_seconds(exercises: list[Exercise], options: GradeOptions) -> float:
    """The longest the grader can take for one student: every step at its own time-out
    (configure, the build, the compiled-code checks, and per exercise the tests, each
    sanitizer tool and the benchmark, as their manifests set them). A task given this much
    is never killed while the grader would still finish on its own, so no limit needs more;
    but for the whole course it is about 29.5 hours a student, which many partitions refuse
    and which would keep a grade that hangs on a GPU for a day: an upper bound only."""
    seconds = build.CONFIGURE_TIMEOUT_S + build.BUILD_ALL_TIMEOUT_S
    for ex in exercises:
        seconds += 2 * binary.TOOL_TIMEOUT_S  # the integrity and technique stages' tools
        if options.build_only:
            continue
        seconds += tests.LIST_TIMEOUT_S + ex.test_timeout_s
        if options.sanitizer:
            seconds += len(ex.sanitizer_tools) * (tests.LIST_TIMEOUT_S + ex.sanitizer_timeout_s)
        if options.benchmark and ex.performance:
            seconds += ex.benchmark_timeout_s
    return seconds


def measured_seconds(options: GradeOptions) -> float:
    """One student's measured cost: the build, and the full grade unless --build-only. For
    any selection of exercises: a few exercises cost less, but one slow exercise graded alone
    still takes tens of seconds (docs/grading_time.md)."""
    return MEASURED_BUILD_S + (0 if options.build_only else MEASURED_GRADE_S)


def time_limit_minutes(exercises: list[Exercise], options: GradeOptions,
                       group_size: int) -> int:
    """Each task's default time limit: COST_MARGIN times its students' measured cost, never
    more than their worst case (the grader ends by itself before), plus the task's start. A
    task that runs past it is named by the merge (TIMEOUT) and submitting again grades its
    students; --time sets another limit."""
    per_student = min(COST_MARGIN * measured_seconds(options),
                      worst_case_seconds(exercises, options))
    return math.ceil((group_size * per_student + MARGIN_S) / 60)


def limit_source(options: GradeOptions) -> str:
    """Where the default limit comes from, for the submitting command's line."""
    measured = (f"the build measured at {MEASURED_BUILD_S} s" if options.build_only else
                f"a full grade measured at {MEASURED_BUILD_S + MEASURED_GRADE_S} s")
    return f"{COST_MARGIN}x {measured} on an H100 (docs/grading_time.md); --time sets your own"


def groups(students: list[Student], size: int) -> list[list[Student]]:
    return [students[i:i + size] for i in range(0, len(students), size)]

def submit(the_batch: batch.Batch, settings: SlurmSettings, selection: list[str],
           roster: Path, gpus: int, say: Callable[[str], None],
           python: str = sys.executable) -> int:
    """Plans the round (who still needs grading), writes its scripts and submits them; 1 when
    some student's folder cannot be graded (not submitted, recorded as a local batch records
    it)."""
    # One batch or submission per OUT at a time, like a local batch (grader/folder_lock.py).
    with folder_lock.out_folder(the_batch.out, "submitting a Slurm round", say):
        return _submit(the_batch, settings, selection, roster, gpus, say, python)


def _submit(the_batch: batch.Batch, settings: SlurmSettings, selection: list[str],
            roster: Path, gpus: int, say: Callable[[str], None], python: str) -> int:
    out = the_batch.out
    if the_batch.options.secret and os.environ.get(SECRET_ENV) != the_batch.options.secret:
        raise GraderError(f"with a secret, give it as ${SECRET_ENV} (not --secret) so that "
                          "sbatch passes it to the tasks without writing it to a file")
    rounds = load_rounds(out)
    if settings.submit:
        for command in ("sbatch", "squeue"):
            if shutil.which(command) is None:
                raise GraderError(f"{command} not found: grading through Slurm needs the Slurm "
                                  "client commands on PATH (run it on a login node of the "
                                  "cluster, or --slurm-dry-run to write the scripts only)")
        queued = still_queued(rounds)
        if queued:
            raise GraderError(f"job {queued[0]} of an earlier round is still queued or running: "
                              "wait for it (squeue) or cancel it (scancel) before submitting "
                              "again, so that nobody is graded twice at once")
    todo, _, state = the_batch.plan()
    options = the_batch.options  # with the batch's seed, settled by plan()
    state["roster"] = str(roster)  # the merge job's gradebook lists the whole roster
    save_state(out, state)
    # A folder that a local batch refuses (missing, empty, files misnamed) would take a task
    # and a GPU to fail: refused here, and recorded as a local batch records it.
    refused = [s for s in todo if submission_problem(s, the_batch.exercises)]
    for student in refused:
        if settings.submit:  # grade_one records the failure and writes the log, grading nothing
            why = the_batch.grade_one(student).removeprefix(FAILED_PREFIX)
        else:  # a dry run records nothing
            why = submission_problem(student, the_batch.exercises)
        say(f"{'not' if settings.submit else 'would not be'} submitted: {student.id}: {why}")
    todo = [s for s in todo if s not in refused]
    if not todo:
        say("every student has a complete report or a folder that cannot be graded: nothing "
            "to submit" if refused else "every student has a complete report: nothing to "
            "submit (--regrade [STUDENT] grades again)")
        the_batch.book.rebuild(the_batch.students, the_batch.exercises)
        return EXIT_SOME_NOT_GRADED if refused else EXIT_ALL_GRADED
    # A regrade replaces a report: the old one is kept aside, not shown as current.
    pending = set((state.get("regrade") or {}).get("pending", []))
    number = len(rounds) + 1
    folder = round_dir(out, number)
    for sub in ("logs", "ended"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    for student in todo if settings.submit else []:
        if student.id in pending:
            report = the_batch.book.report_path(student.id)
            if report.exists():
                kept = folder / "replaced" / report.name
                kept.parent.mkdir(exist_ok=True)
                shutil.copy2(report, kept)
                report.unlink()
                report.with_suffix(".html").unlink(missing_ok=True)
    if settings.submit:
        state.pop("regrade", None)  # the round carries the regrade from here
        save_state(out, state)
    tasks = groups(todo, settings.group_size)
    minutes = settings.time_minutes or time_limit_minutes(the_batch.exercises, options,
                                                          settings.group_size)
    record = {
        "round": number,
        "submitted_at": model.now(),
        "tasks": [[{"id": s.id, "submission": str(s.submission.resolve())} for s in task]
                  for task in tasks],
        "options": {"seed": options.seed, "exercises": selection,
                    "build_only": options.build_only, "sanitizer": options.sanitizer,
                    "benchmark": options.benchmark, "cuda_arch": options.cuda_arch,
                    "jobs": options.jobs, "parallel": options.parallel,
                    "hidden": options.hidden,
                    "secret": bool(options.secret),
                    "sandbox_mode": str(options.sandbox_mode)},
        "time_limit": slurm_time(minutes),
    }
    write_atomically(folder / "tasks.json", json.dumps(record, indent=2) + "\n")
    root = options.root.resolve()
    (folder / "task.sbatch").write_text(
        task_script(out, number, len(tasks), settings, minutes, gpus, python, root),
        encoding="utf-8")
    (folder / "merge.sbatch").write_text(merge_script(out, number, settings, python, root),
                                         encoding="utf-8")
    the_batch.book.rebuild(the_batch.students, the_batch.exercises)
    extra = list(settings.sbatch_args)
    source = "--time" if settings.time_minutes else limit_source(options)
    task_command = ["sbatch", "--parsable", *extra, str(folder / "task.sbatch")]
    say(f"round {number}: {count(len(todo), 'student')} in {count(len(tasks), 'task')} "
        f"({settings.group_size} a task), {f'{gpus} GPU' if gpus else 'no GPU'} and "
        f"{slurm_time(minutes)} each ({source}), seed {options.seed}")
    if not settings.submit:
        say(f"not submitted (--slurm-dry-run); to submit: {shlex.join(task_command)}, then "
            f"sbatch --dependency=afterany:<its job id> {folder / 'merge.sbatch'}")
        rounds.append({"round": number, "array_job": None, "merge_job": None,
                       "tasks": len(tasks), "submitted": False})
        save_rounds(out, rounds)
        return EXIT_SOME_NOT_GRADED if refused else EXIT_ALL_GRADED
    array_job = job_id(run(task_command, "submitting the job array"))
    merge_job = job_id(run(["sbatch", "--parsable", *extra,
                              f"--dependency=afterany:{array_job}",
                              str(folder / "merge.sbatch")], "submitting the merge job"))
    rounds.append({"round": number, "array_job": array_job, "merge_job": merge_job,
                   "tasks": len(tasks), "submitted": True, "submitted_at": record["submitted_at"]})
    save_rounds(out, rounds)
    say(f"submitted job array {array_job} ({count(len(tasks), 'task')}) and merge job "
        f"{merge_job}; "
        f"the gradebook is rebuilt when every task has ended: {out / 'gradebook.csv'}, "
        f"findings in {slurm_dir(out) / 'summary.txt'}")
    return EXIT_SOME_NOT_GRADED if refused else EXIT_ALL_GRADED


# ------------------------------------------------------------------------------ a task

def run_task(out: Path, number: int, index: int, scratch: Path, root: Path,
             grade: batch.GradeFunction, say: Callable[[str], None] = print) -> int:
    """Grades the students of task `index` of round `number` into OUT; writes
    ended/<index>.json as it ends, also when a signal stops it."""
    record = load_round(out, number)
    try:
        students = [Student(s["id"], Path(s["submission"]), f"task {index}")
                    for s in record["tasks"][index]]
    except (IndexError, KeyError, TypeError):
        raise GraderError(f"round {number} has no task {index}") from None
    opts = record["options"]
    secret = os.environ.get(SECRET_ENV) or None
    if opts.get("secret") and not secret:
        raise GraderError(f"this batch grades with a secret, and ${SECRET_ENV} did not reach "
                          "the task (sbatch passes the environment unless --export says not)")
    exercises = manifest.select(manifest.discover(root), opts["exercises"])
    options = GradeOptions(root=root, submission=root, build_dir=out, seed=opts["seed"],
                           build_only=opts["build_only"], sanitizer=opts["sanitizer"],
                           benchmark=opts["benchmark"], jobs=opts["jobs"],
                           cuda_arch=opts["cuda_arch"], secret=secret, hidden=opts["hidden"],
                           parallel=opts.get("parallel"),
                           sandbox_mode=sandbox.Mode(opts.get("sandbox_mode", "required")))
    if not options.build_only:
        sandbox.check_kernel(options.sandbox_mode)
    runner = batch.Batch(students, out, exercises, options, grade, say=say)
    ended = round_dir(out, number) / "ended" / f"{index}.json"
    outcome = {"task": index, "node": socket.gethostname(),
               "job": f"{os.environ.get('SLURM_ARRAY_JOB_ID', '?')}_{index}",
               "started_at": model.now(), "students": {}, "stopped_by": None}
    previous = signal.signal(signal.SIGTERM, batch.interrupt)
    try:
        for student in students:
            outcome["students"][student.id] = runner.grade_one(student, scratch / student.id)
            say(f"{student.id}: {outcome['students'][student.id]}")
    except KeyboardInterrupt:
        outcome["stopped_by"] = "a signal (the time limit, preemption or scancel)"
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        outcome["finished_at"] = model.now()
        write_atomically(ended, json.dumps(outcome, indent=2) + "\n")
    graded = all(runner.book.summary(s.id) is not None for s in students)
    return EXIT_ALL_GRADED if graded else EXIT_SOME_NOT_GRADED

