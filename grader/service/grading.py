"""One grade of a job, as both back ends run it: the `python3 -m grader grade` command line,
and what its exit status and files mean for the job."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from grader import model
from grader.errors import EXIT_INCOMPLETE, GraderError
from grader.service.jobs import HTML, REPORT, JobState

# A command that replaces `python3 -m grader` (split as a shell would): the tests' stand-in
# grader. Unset, the Python that runs the service runs the course's grader.
GRADER_ENV = "COURSE_SERVICE_GRADER"
# A grade's exit status with a report to show: graded, not compiled (--build-only), a
# measurement not taken (the GPU was busy: the report says which).
WITH_REPORT = (0, 1, EXIT_INCOMPLETE)


@dataclass
class GradeSettings:
    build_only: bool = False  # grade --build-only (on this machine or in Slurm)
    hidden: bool = False
    sandbox: bool = True
    timeout_s: float = 3600.0


def grader_prefix() -> list[str]:
    given = os.environ.get(GRADER_ENV, "").strip()
    return shlex.split(given) if given else [sys.executable, "-m", "grader"]


def command(settings: GradeSettings, submission: Path | str, job_dir: Path | str,
            build_dir: Path | str, exercises: list[str]) -> list[str]:
    """grade SUBMISSION with the job's exercises, its report and page into the job's folder."""
    args = [*grader_prefix(), "grade", str(submission),
            *[arg for name in exercises for arg in ("-e", name)],
            "--json", f"{job_dir}/{REPORT}", "--html", f"{job_dir}/{HTML}",
            "--build-dir", str(build_dir),
            "--require-sandbox" if settings.sandbox else "--no-sandbox"]
    if settings.build_only:
        args.append("--build-only")
    if settings.hidden:
        args.append("--hidden")
    return args


def error_line(stderr_lines: list[str]) -> str:
    """The grader's one-line error, else its last line."""
    lines = [line.strip() for line in stderr_lines if line.strip()]
    for line in reversed(lines):
        if line.startswith("grader: error: "):
            return line.removeprefix("grader: error: ")
    return lines[-1] if lines else ""


@dataclass
class Outcome:
    state: JobState
    exit_code: int | None
    error: str | None = None
    score: float | None = None
    max_score: float | None = None


def outcome(job_dir: Path, exit_code: int | None, error: str = "") -> Outcome:
    """The job's end from the grader's exit status and the report it left."""
    report_path = job_dir / REPORT
    if exit_code in WITH_REPORT and report_path.is_file():
        try:
            report = model.Report.load(report_path)
        except GraderError as problem:
            return Outcome(JobState.FAILED, exit_code, f"the grader's report cannot be read: "
                           f"{problem}")
        if report.options.get("build_only"):
            return Outcome(JobState.DONE, exit_code)
        return Outcome(JobState.DONE, exit_code, None, round(report.score, 3),
                       round(report.max_score, 3))
    if not error:
        error = (f"the grader was killed by signal {-exit_code}" if exit_code is not None
                 and exit_code < 0 else f"the grader ended with exit status {exit_code} and "
                 "no report")
    return Outcome(JobState.FAILED, exit_code, error)
