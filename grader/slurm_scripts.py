"""The files of a Slurm round under OUT/slurm (rounds.json, round-<n>/tasks.json) and the
scripts it submits: task.sbatch, the job array whose task i runs `grader slurm-task`, and
merge.sbatch, the job that runs `grader slurm-merge` once the whole array has ended."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from grader.batch_state import load_record, write_atomically
from grader.errors import GraderError

# Where a task builds when neither --scratch nor the cluster names a node-local folder.
DEFAULT_SCRATCH = "${SLURM_TMPDIR:-${TMPDIR:-/tmp}}"


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


def slurm_time(minutes: int) -> str:
    """Minutes as sbatch's --time wants them: D-HH:MM:SS."""
    days, rest = divmod(minutes, 24 * 60)
    return f"{days}-{rest // 60:02d}:{rest % 60:02d}:00"


# ------------------------------------------------------------------------------ files

def slurm_dir(out: Path) -> Path:
    return out / "slurm"


def round_dir(out: Path, number: int) -> Path:
    return slurm_dir(out) / f"round-{number}"


def load_rounds(out: Path) -> list[dict]:
    return load_record(slurm_dir(out) / "rounds.json", list, "the Slurm rounds", [])


def save_rounds(out: Path, rounds: list[dict]) -> None:
    write_atomically(slurm_dir(out) / "rounds.json", json.dumps(rounds, indent=2) + "\n")


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

