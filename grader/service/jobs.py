"""What the service keeps of a submission (a job), the states it goes through, and the
limits it applies to every token."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path


class JobState(str, enum.Enum):
    """queued -> running -> done or failed; a job found running when the service starts (it
    died mid-grade) goes back to queued."""
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"      # the grader wrote its report (whatever the score)
    FAILED = "failed"  # the grader could not grade it: no report, `error` says why

    @property
    def finished(self) -> bool:
        return self in (JobState.DONE, JobState.FAILED)


class Mode(str, enum.Enum):
    """Where the jobs are graded."""
    GPU = "gpu"                # local workers, one per GPU
    BUILD_ONLY = "build-only"  # local workers, grade --build-only: no GPU needed (CI)
    SLURM = "slurm"            # each job a Slurm job


@dataclass
class Limits:
    """What one token may send (the defaults of `serve`'s options)."""
    max_upload_bytes: int = 10 * 1024 * 1024
    max_unpacked_bytes: int = 50 * 1024 * 1024
    max_files: int = 2000
    max_queued: int = 100          # a token's jobs queued or running at once
    requests_per_minute: int = 600


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class Job:
    id: str
    token_id: int
    course: str
    exercises: list[str]           # as the client named them; [] for the whole course
    files: list[str]               # the exercise files the upload held, chapter/file
    client_ref: str = ""
    state: JobState = JobState.QUEUED
    created_at: str = field(default_factory=now)
    started_at: str | None = None
    finished_at: str | None = None
    attempts: int = 0
    worker: str | None = None
    progress: str = ""
    error: str | None = None
    exit_code: int | None = None
    score: float | None = None
    max_score: float | None = None
    slurm_job: str | None = None
    seq: int = 0                   # the order of arrival

    def folder(self, data: Path) -> Path:
        return job_folder(data, self.id)

    @classmethod
    def from_row(cls, row) -> Job:
        return cls(id=row["id"], token_id=row["token_id"], course=row["course"],
                   exercises=json.loads(row["exercises"]), files=json.loads(row["files"]),
                   client_ref=row["client_ref"], state=JobState(row["state"]),
                   created_at=row["created_at"], started_at=row["started_at"],
                   finished_at=row["finished_at"], attempts=row["attempts"],
                   worker=row["worker"], progress=row["progress"], error=row["error"],
                   exit_code=row["exit_code"], score=row["score"], max_score=row["max_score"],
                   slurm_job=row["slurm_job"], seq=row["seq"])


def job_folder(data: Path, job_id: str) -> Path:
    return data / "jobs" / job_id


# The files of a job's folder.
UNPACKED = "unpacked"
SUBMISSION = "submission"
REPORT = "report.json"
HTML = "report.html"
LOG = "grade.log"
