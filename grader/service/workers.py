"""Local workers: one thread per GPU (or --workers N; one with --build-only), each grading one
job at a time with `python3 -m grader grade` in a process session of its own, its GPU chosen
by CUDA_VISIBLE_DEVICES. The grade takes the course's turns on that GPU and runs the
students' programs in the course's sandbox, as any `grade` does. Each worker copies the job's
submission into its own folder (DATA/workers/<n>/submission) and builds in DATA/workers/<n>/
build, so the next job reuses the configured build and rebuilds only the students' files.

And what the service does once at start-up, before it serves: it removes what an accept cut
short left, ends any grader a killed service left running, and puts back in the queue the
jobs that were running then."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

from grader import model, proc
from grader.service import grading
from grader.service.grading import GradeSettings
from grader.service.jobs import LOG, REPORT, HTML, SUBMISSION, Job, JobState, Mode
from grader.service.store import Store
from grader.slurm_cleanup import end_processes_working_in

ROOT = Path(__file__).resolve().parent.parent.parent
IDLE_S = 0.5            # a worker with nothing to do looks again this often (or when woken)
PROGRESS_EVERY_S = 2  # the grader says the step it is at this often (cli.Progress)
STOP_GRACE_S = 10.0     # after SIGINT (the grader ends its programs), then SIGKILL
RESTARTED = "the service restarted while it was graded; it is graded again"
STOPPED = "the service stopped while it was graded; it is graded again when it starts"


def workers_folder(data: Path) -> Path:
    return data / "workers"


def recover(store: Store, data: Path, mode: Mode) -> list[str]:
    """Start-up: the jobs put back in the queue. A job folder without a row (an upload cut
    short before it was accepted) is removed; a grader still working in a worker's folder (the
    service was killed) is ended; every running job is queued again, except a Slurm job the
    scheduler still has, which the Slurm back end goes on watching."""
    jobs = data / "jobs"
    if jobs.is_dir():
        known = store.job_ids()
        for folder in jobs.iterdir():
            if folder.name not in known:
                shutil.rmtree(folder, ignore_errors=True)
    if workers_folder(data).is_dir():
        end_processes_working_in(workers_folder(data).resolve())
    again = []
    for job in store.jobs_in(JobState.RUNNING):
        if mode == Mode.SLURM and job.slurm_job:
            continue
        store.requeue(job.id, RESTARTED)
        again.append(job.id)
    return again


class LocalWorker(threading.Thread):
    def __init__(self, number: int, gpu: model.GpuInfo | None, store: Store, data: Path,
                 settings: GradeSettings, wake: threading.Event, stopping: threading.Event):
        super().__init__(name=f"worker-{number}", daemon=True)
        self.number = number
        self.gpu = gpu
        self.store = store
        self.data = data
        self.settings = settings
        self.wake = wake
        self.stopping = stopping
        self.folder = (workers_folder(data) / str(number)).resolve()
        self.process: subprocess.Popen | None = None
        self._ended: str | None = None  # why _end ended the running grade
        self.lock = threading.Lock()

    @property
    def label(self) -> str:
        where = f"GPU {self.gpu.index} ({self.gpu.uuid})" if self.gpu else "build-only"
        return f"worker {self.number}, {where}"

    def run(self) -> None:
        while not self.stopping.is_set():
            job = self.store.claim(self.label)
            if job is None:
                if self.wake.wait(IDLE_S):
                    self.wake.clear()
                continue
            try:
                self.grade(job)
            except Exception as error:  # a bug of the service's: the job says so, the worker
                # goes on with the next
                self.store.finish(job.id, JobState.FAILED,
                                  error=f"the service failed: {type(error).__name__}: {error}")

    def grade(self, job: Job) -> None:
        job_dir = job.folder(self.data).resolve()
        submission = self.folder / SUBMISSION
        shutil.rmtree(submission, ignore_errors=True)
        shutil.copytree(job_dir / SUBMISSION, submission)
        for name in (REPORT, HTML):
            (job_dir / name).unlink(missing_ok=True)
        env = dict(os.environ, COURSE_PROGRESS_EVERY_S=str(PROGRESS_EVERY_S))
        if self.gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = self.gpu.uuid
        argv = grading.command(self.settings, submission, job_dir, self.folder / "build",
                               job.exercises)
        stderr: list[str] = []
        with (job_dir / LOG).open("ab") as log:
            log.write(f"== attempt {job.attempts} on {self.label}\n".encode())
            log.flush()
            with self.lock:
                if self.stopping.is_set():
                    self.store.requeue(job.id, STOPPED)
                    return
                self.process = proc.start_retrying(lambda: subprocess.Popen(
                    argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.PIPE,
                    stdin=subprocess.DEVNULL, start_new_session=True))
            timer = threading.Timer(self.settings.timeout_s, self._end, ("time-out",))
            timer.daemon = True
            timer.start()
            try:
                self._follow(job, log, stderr)
                code = self.process.wait()
            finally:
                timer.cancel()
        with self.lock:
            self.process, ended, self._ended = None, self._ended, None
        if self.stopping.is_set() or ended == "stop":
            self.store.requeue(job.id, STOPPED)
            return
        error = grading.error_line(stderr)
        if ended == "time-out":
            error = (f"the grade ran past the service's limit of {self.settings.timeout_s:g} s "
                     "and was stopped")
            code = None
        result = grading.outcome(job_dir, code, error)
        self.store.finish(job.id, result.state, exit_code=result.exit_code, error=result.error,
                          score=result.score, max_score=result.max_score)

    def _follow(self, job: Job, log, stderr: list[str]) -> None:
        """The grader's stderr into the log; its progress lines ("grader: ...") into the job:
        where its stderr is a pipe, the grader prints the step it is at once every
        PROGRESS_EVERY_S."""
        for raw in self.process.stderr:
            log.write(raw)
            log.flush()
            line = raw.decode("utf-8", "replace").rstrip("\n")
            stderr.append(line)
            del stderr[:-50]
            if line.startswith("grader: ") and not line.startswith("grader: error: "):
                self.store.set_progress(job.id, line.removeprefix("grader: "))

    def _end(self, why: str) -> None:
        """Ends the running grade: SIGINT (the grader ends its own programs), then, after
        STOP_GRACE_S, SIGKILL to its session and whatever still works in this worker's
        folder."""
        with self.lock:
            process = self.process
            if process is None:
                return
            self._ended = why
        try:
            os.kill(process.pid, signal.SIGINT)
        except OSError:
            pass
        try:
            process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
        end_processes_working_in(self.folder)

    def stop(self) -> None:
        self._end("stop")
