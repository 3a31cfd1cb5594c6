"""`serve --slurm`: each job is a Slurm job instead of a local grade. One thread submits the
oldest queued jobs while fewer than --workers are in Slurm (sbatch of DATA/jobs/<id>/grade.sbatch,
which runs the same `grade` command as a local worker on node-local scratch, as a `batch
--slurm` task does), and looks every --poll seconds at the scheduler: a job squeue no longer
lists has ended, and the exit status its script left, or else sacct's state, says how. Jobs
live in Slurm, not in the service: a service that stops or restarts goes on watching them."""

from __future__ import annotations

import getpass
import math
import shlex
import sys
import threading
from pathlib import Path
from typing import Callable

from grader import slurm
from grader.errors import GraderError
from grader.service import grading
from grader.service.grading import GradeSettings
from grader.service.jobs import LOG, SUBMISSION, Job, JobState
from grader.service.store import Store
from grader.slurm_queue import ENDED_EARLY, job_id, run
from grader.slurm_scripts import SlurmSettings, slurm_time

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = "grade.sbatch"
EXIT_STATUS = "exit_status"
_BUILD = "@BUILD@"  # where the script's own "$scratch/build" goes in the grade command


def default_minutes(settings: GradeSettings) -> int:
    """As a `batch --slurm` task of one student: a margin over the measured full grade."""
    seconds = slurm.MEASURED_BUILD_S + (0 if settings.build_only else slurm.MEASURED_GRADE_S)
    return math.ceil((slurm.COST_MARGIN * seconds + slurm.MARGIN_S) / 60)


def script(job: Job, job_dir: Path, settings: GradeSettings, cluster: SlurmSettings,
           minutes: int, python: str = sys.executable) -> str:
    grade = shlex.join(grading.command(settings, job_dir / SUBMISSION, job_dir, _BUILD,
                                       job.exercises)).replace(_BUILD, '"$scratch/build"')
    lines = ["#!/bin/bash", f"#SBATCH --job-name=course-service-{job.id[:8]}",
             f"#SBATCH --output={job_dir / 'slurm.out'}", f"#SBATCH --time={slurm_time(minutes)}",
             "#SBATCH --ntasks=1"]
    if cluster.partition:
        lines.append(f"#SBATCH --partition={cluster.partition}")
    if cluster.account:
        lines.append(f"#SBATCH --account={cluster.account}")
    if not settings.build_only:
        lines.append("#SBATCH --gres=gpu:1")
    status = shlex.quote(str(job_dir / EXIT_STATUS))
    lines += [
        "set -u",
        # Named as slurm-cleanup expects a task's folder, so that it may remove it.
        f"scratch={cluster.scratch}/cuda-course-${{SLURM_JOB_ID}}-0",
        f"cd {shlex.quote(str(ROOT))}",
        f"cleanup() {{ {shlex.quote(python)} -m grader slurm-cleanup \"$scratch\" "
        "|| rm -rf \"$scratch\"; }",
        "trap cleanup EXIT",
        "mkdir -p \"$scratch\"",
        f"export CCACHE_DIR=${{CCACHE_DIR:-{cluster.scratch}/cuda-course-ccache}}",
        f"rm -f {status}",
        f"{grade} >> {shlex.quote(str(job_dir / LOG))} 2>&1 &",
        # A time limit or scancel signals this shell: the grader gets SIGINT, ends its
        # programs and exits; its status is recorded whatever happened.
        "child=$!",
        "trap 'kill -INT $child 2>/dev/null' TERM",
        "wait $child; status=$?",
        "while kill -0 $child 2>/dev/null; do wait $child; status=$?; done",
        f"echo $status > {status}",
        "exit $status", ""]
    return "\n".join(lines)


class SlurmBackend(threading.Thread):
    def __init__(self, store: Store, data: Path, settings: GradeSettings,
                 cluster: SlurmSettings, minutes: int, max_jobs: int, poll_s: float,
                 wake: threading.Event, stopping: threading.Event,
                 say: Callable[[str], None]):
        super().__init__(name="slurm", daemon=True)
        self.store, self.data, self.settings, self.cluster = store, data, settings, cluster
        self.minutes, self.max_jobs, self.poll_s = minutes, max_jobs, poll_s
        self.wake, self.stopping, self.say = wake, stopping, say

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.poll()
                self.submit_more()
            except GraderError as error:  # squeue unreachable for a while: said, tried again
                self.say(f"slurm: {error}")
            except Exception as error:  # noqa: BLE001 - the service goes on serving
                self.say(f"slurm: the service failed: {type(error).__name__}: {error}")
            if self.wake.wait(self.poll_s):
                self.wake.clear()

    def submit_more(self) -> None:
        in_slurm = len(self.store.jobs_in(JobState.RUNNING))
        while in_slurm < self.max_jobs and not self.stopping.is_set():
            job = self.store.claim("slurm")
            if job is None:
                return
            in_slurm += 1
            job_dir = job.folder(self.data).resolve()
            path = job_dir / SCRIPT
            path.write_text(script(job, job_dir, self.settings, self.cluster, self.minutes),
                            encoding="utf-8")
            try:
                printed = run(["sbatch", "--parsable", *self.cluster.sbatch_args, str(path)],
                              "submitting a grade")
                number = job_id(printed)
            except GraderError as error:
                self.store.finish(job.id, JobState.FAILED,
                                  error=f"it could not be submitted to Slurm: {error}")
                continue
            self.store.set_slurm_job(job.id, number)
            self.store.set_progress(job.id, f"Slurm job {number}: submitted")

    def poll(self) -> None:
        watched = [j for j in self.store.jobs_in(JobState.RUNNING) if j.slurm_job]
        if not watched:
            return
        listed = {}
        for line in run(["squeue", "--noheader", "--format=%i|%T", "--user", getpass.getuser()],
                        "looking at the grades in Slurm").splitlines():
            number, _, state = line.strip().partition("|")
            listed[number] = state
        for job in watched:
            if job.slurm_job in listed:
                self.store.set_progress(job.id, f"Slurm job {job.slurm_job}: "
                                        f"{listed[job.slurm_job].lower() or 'queued'}")
            else:
                self.ended(job)

    def ended(self, job: Job) -> None:
        job_dir = job.folder(self.data)
        try:
            code = int((job_dir / EXIT_STATUS).read_text().strip())
        except (OSError, ValueError):
            code = None
        if code is None:
            state = final_state(job.slurm_job)
            why = ENDED_EARLY.get(state, f"ended ({state})" if state else "ended")
            self.store.finish(job.id, JobState.FAILED, error=f"its Slurm job {job.slurm_job} "
                              f"{why} before the grade finished")
            return
        try:
            tail = (job_dir / LOG).read_text(encoding="utf-8", errors="replace")[-8000:]
        except OSError:
            tail = ""
        result = grading.outcome(job_dir, code, grading.error_line(tail.splitlines()))
        self.store.finish(job.id, result.state, exit_code=result.exit_code, error=result.error,
                          score=result.score, max_score=result.max_score)


def final_state(number: str) -> str:
    """The state sacct recorded for a job ("" when it knows none)."""
    try:
        text = run(["sacct", "-n", "-P", "-X", "--format=JobID,State", "-j", number],
                   "reading a grade's end")
    except GraderError:
        return ""
    for line in text.splitlines():
        found, _, state = line.strip().partition("|")
        if found == number and state:
            return state.split()[0]
    return ""
