"""Asking the Slurm scheduler: running its client commands, the job id sbatch prints, the
earlier rounds squeue still lists, and each array task's final state (scontrol, else sacct)."""

from __future__ import annotations

import re
import shlex
import subprocess

from grader.errors import GraderError

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


def run(command: list[str], what: str) -> str:
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


def job_id(text: str) -> str:
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
    listed = run(["squeue", "--noheader", "--format=%F", "--jobs", ",".join(jobs)],
                  "checking earlier rounds")
    queued = {line.strip() for line in listed.splitlines() if line.strip()}
    return [j for j in jobs if j in queued]


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
        states = parse_scontrol(run(["scontrol", "show", "job", "-o", array_job],
                                     "reading the tasks' states"))
        if states:
            return states, "scontrol"
    except GraderError:
        pass
    try:
        states = parse_sacct(run(["sacct", "-n", "-P", "-X", "--format=JobID,State",
                                   "-j", array_job], "reading the tasks' states"), array_job)
        if states:
            return states, "sacct"
    except GraderError:
        pass
    return {}, "none (neither scontrol nor sacct knew the job)"

