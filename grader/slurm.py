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
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grader import batch, folder_lock, manifest, model, sandbox
from grader.errors import GraderError
from grader.manifest import Exercise
from grader.stages import build, integrity, technique, tests
from grader.stages.common import SECRET_ENV, GradeOptions

EXIT_ALL_GRADED, EXIT_SOME_NOT_GRADED = 0, 1
# The name of a task's build folder on its node's scratch, as task_script makes it.
TASK_FOLDER = r"cuda-course-\d+-\d+"
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
# Where a task builds when neither --scratch nor the cluster names a node-local folder.
DEFAULT_SCRATCH = "${SLURM_TMPDIR:-${TMPDIR:-/tmp}}"

# Slurm job states that end a task without its work done, and what they mean for people.
ENDED_EARLY = {
    "TIMEOUT": "ran past its time limit",
    "PREEMPTED": "was preempted by the scheduler",
    "CANCELLED": "was cancelled (scancel, or an administrator)",
    "FAILED": "failed (see its log)",
    "NODE_FAIL": "lost its node",
    "OUT_OF_MEMORY": "ran out of memory",
    "BOOT_FAIL": "could not start its node",
    "DEADLINE": "missed its deadline",
}


@dataclass
class SlurmSettings:
    """What the instructor passes through to sbatch, and how tasks are cut."""
    partition: str | None = None
    account: str | None = None
    sbatch_args: list[str] = field(default_factory=list)  # passed through, in order
    group_size: int = 1            # students per task
    time_minutes: int | None = None  # None: from the measured cost (time_limit_minutes)
    max_parallel: int | None = None  # the array's %N: tasks running at once
    scratch: str = DEFAULT_SCRATCH   # a node-local folder, expanded by the task's shell
    submit: bool = True              # False: write the scripts and print the commands


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
        seconds += integrity.TOOL_TIMEOUT_S + technique.TOOL_TIMEOUT_S
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


def slurm_time(minutes: int) -> str:
    """Minutes as sbatch's --time wants them: D-HH:MM:SS."""
    days, rest = divmod(minutes, 24 * 60)
    return f"{days}-{rest // 60:02d}:{rest % 60:02d}:00"


def groups(students: list[batch.Student], size: int) -> list[list[batch.Student]]:
    return [students[i:i + size] for i in range(0, len(students), size)]


# ------------------------------------------------------------------------------ files

def slurm_dir(out: Path) -> Path:
    return out / "slurm"


def round_dir(out: Path, number: int) -> Path:
    return slurm_dir(out) / f"round-{number}"


def load_rounds(out: Path) -> list[dict]:
    return batch.load_record(slurm_dir(out) / "rounds.json", list, "the Slurm rounds", [])


def save_rounds(out: Path, rounds: list[dict]) -> None:
    batch.write_atomically(slurm_dir(out) / "rounds.json", json.dumps(rounds, indent=2) + "\n")


def load_round(out: Path, number: int) -> dict:
    path = round_dir(out, number) / "tasks.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise GraderError(f"{path} cannot be read ({getattr(error, 'strerror', None) or error})"
                          ) from None


# ------------------------------------------------------------------------------ scripts

def _sbatch_header(settings: SlurmSettings, name: str, output: str, minutes: int) -> list[str]:
    lines = ["#!/bin/bash", f"#SBATCH --job-name={name}", f"#SBATCH --output={output}",
             f"#SBATCH --time={slurm_time(minutes)}"]
    if settings.partition:
        lines.append(f"#SBATCH --partition={settings.partition}")
    if settings.account:
        lines.append(f"#SBATCH --account={settings.account}")
    return lines


def task_script(out: Path, number: int, count: int, settings: SlurmSettings, minutes: int,
                gpus: int, python: str, root: Path) -> str:
    """The job array: task i runs `grader slurm-task` for its students. The build goes to
    node-local scratch (removed when the task ends); the compiler cache stays there for the
    node's next tasks, so the course's own code compiles once per node."""
    folder = round_dir(out, number)
    array = f"0-{count - 1}" + (f"%{settings.max_parallel}" if settings.max_parallel else "")
    lines = _sbatch_header(settings, "course-grade", str(folder / "logs" / "task-%a.out"),
                           minutes)
    lines += [f"#SBATCH --array={array}", "#SBATCH --ntasks=1"]
    if gpus:
        lines.append(f"#SBATCH --gres=gpu:{gpus}")
    lines += [
        "set -u",
        f"scratch={settings.scratch}/cuda-course-${{SLURM_ARRAY_JOB_ID}}-${{SLURM_ARRAY_TASK_ID}}",
        f"cd {shlex.quote(str(root))}",
        # slurm-cleanup also ends what still works in the folder (a program that a signal
        # orphaned would write it back); plain rm where Python itself cannot run. The trap is
        # set before the folder exists, so that no signal finds it there without one.
        f"cleanup() {{ {shlex.quote(python)} -m grader slurm-cleanup \"$scratch\" "
        "|| rm -rf \"$scratch\"; }",
        "trap cleanup EXIT",
        "mkdir -p \"$scratch\"",
        f"export CCACHE_DIR=${{CCACHE_DIR:-{settings.scratch}/cuda-course-ccache}}",
        # Not exec: the trap must still remove the build when the grader ends.
        f"{shlex.quote(python)} -m grader slurm-task {shlex.quote(str(out))} --round {number} "
        "--index \"$SLURM_ARRAY_TASK_ID\" --scratch \"$scratch\" &",
        # Slurm signals the whole step at a time limit or preemption; a signal to this shell
        # reaches the grader too. Each signal ends a wait early, so wait until the grader is
        # gone (it may still be writing its reports) and pass its status on.
        "child=$!",
        "trap 'kill -TERM $child 2>/dev/null' TERM",
        "wait $child; status=$?",
        "while kill -0 $child 2>/dev/null; do wait $child; status=$?; done",
        "exit $status",
        ""]
    return "\n".join(lines)


def merge_script(out: Path, number: int, settings: SlurmSettings, python: str,
                 root: Path) -> str:
    folder = round_dir(out, number)
    lines = _sbatch_header(settings, "course-merge", str(folder / "logs" / "merge.out"), 30)
    lines += ["#SBATCH --ntasks=1", f"cd {shlex.quote(str(root))}",
              f"exec {shlex.quote(python)} -m grader slurm-merge {shlex.quote(str(out))} "
              f"--round {number}", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ submitting

def _run(command: list[str], what: str) -> str:
    """A Slurm client command's stdout; GraderError naming it when it fails."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise GraderError(f"{command[0]} not found: {what} needs the Slurm client commands "
                          "on PATH (run it on a login node of the cluster)") from None
    except subprocess.TimeoutExpired:
        raise GraderError(f"{command[0]} did not answer within 120 s ({what})") from None
    if result.returncode != 0:
        detail = (result.stderr.strip() or result.stdout.strip()).splitlines()
        raise GraderError(f"{shlex.join(command)} failed: "
                          f"{detail[-1] if detail else f'exit status {result.returncode}'}")
    return result.stdout


def _job_id(text: str) -> str:
    # sbatch --parsable prints "id" or "id;cluster".
    job = text.strip().split(";")[0]
    if not re.fullmatch(r"\d+", job):
        raise GraderError(f"sbatch printed {text.strip()!r}, not a job id")
    return job


def still_queued(rounds: list[dict]) -> list[str]:
    """Job ids of earlier rounds that squeue still lists (pending or running)."""
    jobs = [j for r in rounds for j in (r.get("array_job"), r.get("merge_job")) if j]
    if not jobs:
        return []
    listed = _run(["squeue", "--noheader", "--format=%F", "--jobs", ",".join(jobs)],
                  "checking earlier rounds")
    queued = {line.strip() for line in listed.splitlines() if line.strip()}
    return [j for j in jobs if j in queued]


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
    batch.save_state(out, state)
    # A folder that a local batch refuses (missing, empty, files misnamed) would take a task
    # and a GPU to fail: refused here, and recorded as a local batch records it.
    refused = [s for s in todo if batch.submission_problem(s, the_batch.exercises)]
    for student in refused:
        if settings.submit:  # grade_one records the failure and writes the log, grading nothing
            why = the_batch.grade_one(student).removeprefix(batch.FAILED_PREFIX)
        else:  # a dry run records nothing
            why = batch.submission_problem(student, the_batch.exercises)
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
        batch.save_state(out, state)
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
    batch.write_atomically(folder / "tasks.json", json.dumps(record, indent=2) + "\n")
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
    say(f"round {number}: {_count(len(todo), 'student')} in {_count(len(tasks), 'task')} "
        f"({settings.group_size} a task), {f'{gpus} GPU' if gpus else 'no GPU'} and "
        f"{slurm_time(minutes)} each ({source}), seed {options.seed}")
    if not settings.submit:
        say(f"not submitted (--slurm-dry-run); to submit: {shlex.join(task_command)}, then "
            f"sbatch --dependency=afterany:<its job id> {folder / 'merge.sbatch'}")
        rounds.append({"round": number, "array_job": None, "merge_job": None,
                       "tasks": len(tasks), "submitted": False})
        save_rounds(out, rounds)
        return EXIT_SOME_NOT_GRADED if refused else EXIT_ALL_GRADED
    array_job = _job_id(_run(task_command, "submitting the job array"))
    merge_job = _job_id(_run(["sbatch", "--parsable", *extra,
                              f"--dependency=afterany:{array_job}",
                              str(folder / "merge.sbatch")], "submitting the merge job"))
    rounds.append({"round": number, "array_job": array_job, "merge_job": merge_job,
                   "tasks": len(tasks), "submitted": True, "submitted_at": record["submitted_at"]})
    save_rounds(out, rounds)
    say(f"submitted job array {array_job} ({_count(len(tasks), 'task')}) and merge job "
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
        students = [batch.Student(s["id"], Path(s["submission"]), f"task {index}")
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
        batch.write_atomically(ended, json.dumps(outcome, indent=2) + "\n")
    graded = all(runner.book.summary(s.id) is not None for s in students)
    return EXIT_ALL_GRADED if graded else EXIT_SOME_NOT_GRADED


def processes_working_in(folder: Path) -> list[int]:
    """The processes (Linux's /proc) whose current directory is in `folder` or that name it in
    an argument, this one and its parent left out: the programs of a task's build."""
    inside = str(folder).rstrip("/")
    spared = {os.getpid(), os.getppid()}

    def names_it(text: str) -> bool:
        return text == inside or text.endswith(inside) or inside + "/" in text

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        try:
            cwd = os.readlink(entry / "cwd").removesuffix(" (deleted)")
            args = (entry / "cmdline").read_bytes().decode("utf-8", "replace").split("\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if cwd == inside or cwd.startswith(inside + "/") or any(map(names_it, args)):
            found.append(int(entry.name))
    return found


def end_processes_working_in(folder: Path) -> None:
    """Stops every process working in `folder` until a look finds none new (a stopped
    process forks no more), then kills them all."""
    stopped: set[int] = set()
    while True:
        new = [pid for pid in processes_working_in(folder) if pid not in stopped]
        if not new:
            break
        for pid in new:
            stopped.add(pid)
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def remove_scratch(folder: Path, attempts: int = 5, pause_s: float = 0.5) -> bool:
    """Removes a task's build folder, first ending every process still working in it: one
    that a signal orphaned (it has its own session, so the task's end does not reach it) would
    write the folder back. True once it is gone with nothing left working in it. Only a
    folder named as task_script names them is touched: "/" would end every process."""
    if not folder.is_absolute() or not re.fullmatch(TASK_FOLDER, folder.name):
        raise GraderError(f"{folder} is not a task's build folder (an absolute path ending in "
                          "cuda-course-<job>-<task>); nothing removed")
    for attempt in range(attempts):
        end_processes_working_in(folder)
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.lexists(folder) and not processes_working_in(folder):
            return True
        if attempt + 1 < attempts:
            time.sleep(pause_s)
    return False


# ------------------------------------------------------------------------------ merging

def parse_scontrol(text: str) -> dict[int, str]:
    """Array task index -> job state, from `scontrol show job -o <array job>` (one line per
    task; a line may stand for a range of tasks still pending, ArrayTaskId=3-7)."""
    states: dict[int, str] = {}
    for line in text.splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        ids, state = fields.get("ArrayTaskId"), fields.get("JobState")
        if ids is None or state is None:
            continue
        for part in ids.split("%")[0].split(","):
            low, _, high = part.partition("-")
            if low.isdigit():
                for i in range(int(low), int(high or low) + 1):
                    states[i] = state
    return states


def parse_sacct(text: str, array_job: str) -> dict[int, str]:
    """Array task index -> job state, from `sacct -n -P -X --format=JobID,State -j <job>`."""
    states: dict[int, str] = {}
    for line in text.splitlines():
        job, _, state = line.strip().partition("|")
        match = re.fullmatch(rf"{re.escape(array_job)}_(\d+)", job)
        if match:
            states[int(match.group(1))] = state.split()[0] if state else "UNKNOWN"
    return states


def task_states(array_job: str) -> tuple[dict[int, str], str]:
    """Each task's final state and where it came from: scontrol while slurmctld still holds
    the job (MinJobAge), else sacct where the cluster keeps accounting."""
    try:
        states = parse_scontrol(_run(["scontrol", "show", "job", "-o", array_job],
                                     "reading the tasks' states"))
        if states:
            return states, "scontrol"
    except GraderError:
        pass
    try:
        states = parse_sacct(_run(["sacct", "-n", "-P", "-X", "--format=JobID,State",
                                   "-j", array_job], "reading the tasks' states"), array_job)
        if states:
            return states, "sacct"
    except GraderError:
        pass
    return {}, "none (neither scontrol nor sacct knew the job)"


def merge(out: Path, number: int, exercises: list[Exercise],
          states: dict[int, str] | None = None, say: Callable[[str], None] = print) -> int:
    """Rebuilds the gradebook from the reports; names the tasks that ended early and
    records their students without a report as not graded, with the reason."""
    record = load_round(out, number)
    rounds = load_rounds(out)
    info = next((r for r in rounds if r.get("round") == number), {})
    array_job = info.get("array_job") or "?"
    source = "given"
    if states is None:
        states, source = task_states(array_job) if info.get("array_job") else ({}, "none")
    book = batch.Book(out)
    roster_path = _roster_of(out)
    students = batch.read_roster(roster_path) if roster_path else []
    findings = {"round": number, "array_job": array_job, "states_from": source,
                "merged_at": model.now(), "tasks": [], "not_graded": []}
    for index, task in enumerate(record["tasks"]):
        state = states.get(index, "UNKNOWN")
        ended = _load_json(round_dir(out, number) / "ended" / f"{index}.json")
        missing = [s["id"] for s in task if book.summary(s["id"]) is None]
        entry = {"task": index, "job": f"{array_job}_{index}", "state": state,
                 "students": [s["id"] for s in task], "without_report": missing,
                 "node": (ended or {}).get("node")}
        findings["tasks"].append(entry)
        if not missing:
            continue
        if state in ENDED_EARLY:
            why = f"its Slurm task {array_job}_{index} {ENDED_EARLY[state]} ({state})"
        elif ended is None:
            why = (f"its Slurm task {array_job}_{index} ended ({state}) without saying so: "
                   "killed before it could write, or never started")
        elif ended.get("stopped_by"):
            why = f"its Slurm task {array_job}_{index} was stopped by {ended['stopped_by']}"
        else:
            why = ""  # the task recorded its own failure for this student
        for sid in missing:
            if why:
                book.record_failure(sid, why + "; submitting again grades it")
            findings["not_graded"].append({"student": sid, "task": index,
                                           "reason": why or book.failure(sid) or "unknown"})
    book.rebuild(students, exercises)
    # A --build-only round: whose files do not compile, as a local batch's last line says.
    findings["do_not_compile"] = [s.id for s in students if (summary := book.summary(s.id))
                                  and summary.did_not_compile]
    batch.write_atomically(round_dir(out, number) / "merge.json",
                           json.dumps(findings, indent=2) + "\n")
    text = summary_text(findings, len(students))
    batch.write_atomically(slurm_dir(out) / "summary.txt", text)
    say(text.rstrip())
    return EXIT_SOME_NOT_GRADED if findings["not_graded"] or findings["do_not_compile"] \
        else EXIT_ALL_GRADED


def summary_text(findings: dict, roster_size: int) -> str:
    early = [t for t in findings["tasks"] if t["state"] in ENDED_EARLY]
    lines = [f"round {findings['round']} (job array {findings['array_job']}): "
             f"{_count(len(findings['tasks']), 'task')}, {len(early)} ended early; "
             f"{_count(len(findings['not_graded']), 'student')} not graded "
             f"(task states from {findings['states_from']})"]
    for t in early:
        lines.append(f"  task {t['task']} ({t['job']}) {t['state']}: {ENDED_EARLY[t['state']]}; "
                     f"students {', '.join(t['students'])}")
    for n in findings["not_graded"]:
        lines.append(f"  not graded: {n['student']}: {n['reason']}")
    if findings["not_graded"]:
        lines.append("submit the same command again to grade only these students")
    unbuilt = findings.get("do_not_compile") or []
    if unbuilt:
        lines.append(f"{_count(len(unbuilt), 'student')} whose files do not compile: "
                     f"{', '.join(unbuilt)}")
    lines.append(f"roster: {roster_size} students; gradebook.csv rebuilt from the reports")
    return "\n".join(lines) + "\n"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _load_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _roster_of(out: Path) -> Path | None:
    state = batch.load_state(out)
    roster = state.get("roster")
    return Path(roster) if roster else None
