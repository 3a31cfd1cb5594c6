"""The service's database: SQLite in WAL mode (DATA/service.db), holding the tokens (hashed)
and the jobs. Every call opens its own connection, so the web server's threads, the workers
and a `serve-token` command run at the same time each see committed rows only; a job is
claimed inside one write transaction, so two workers never take the same job."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from grader.errors import GraderError
from grader.service.jobs import Job, JobState, now

SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    course TEXT NOT NULL,
    prefix TEXT NOT NULL UNIQUE,
    salt BLOB NOT NULL,
    hash BLOB NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS tokens_live_name ON tokens(name) WHERE revoked_at IS NULL;
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    token_id INTEGER NOT NULL REFERENCES tokens(id),
    course TEXT NOT NULL,
    exercises TEXT NOT NULL,
    files TEXT NOT NULL,
    client_ref TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    worker TEXT,
    progress TEXT NOT NULL DEFAULT '',
    error TEXT,
    exit_code INTEGER,
    score REAL,
    max_score REAL,
    slurm_job TEXT
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, seq);
CREATE INDEX IF NOT EXISTS jobs_token ON jobs(token_id, state);
"""


@dataclass
class TokenRow:
    id: int
    name: str
    course: str
    prefix: str
    salt: bytes
    hash: bytes
    created_at: str
    last_used_at: str | None
    revoked_at: str | None


class Store:
    def __init__(self, path: Path):
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise GraderError(f"cannot open the service's database {path}: {error}") from None

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.row_factory = sqlite3.Row
        try:
            db.execute("PRAGMA busy_timeout=30000")
            db.execute("PRAGMA synchronous=NORMAL")  # with WAL: a commit survives a crash of
            # the service; only a power cut may lose the last ones
            yield db
        finally:
            db.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (no other writer can slip between a read
        and the write that depends on it)."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # ------------------------------------------------------------------------ tokens

    def add_token(self, name: str, course: str, prefix: str, salt: bytes,
                  digest: bytes) -> None:
        with self._write() as db:
            if db.execute("SELECT 1 FROM tokens WHERE name = ? AND revoked_at IS NULL",
                          (name,)).fetchone():
                raise GraderError(f"a token named {name!r} exists already: revoke it first "
                                  "('serve-token revoke --name NAME'), or give another name")
            db.execute("INSERT INTO tokens (name, course, prefix, salt, hash, created_at) "
                       "VALUES (?, ?, ?, ?, ?, ?)", (name, course, prefix, salt, digest, now()))

    def tokens(self) -> list[TokenRow]:
        with self._connect() as db:
            return [TokenRow(**dict(row)) for row in
                    db.execute("SELECT * FROM tokens ORDER BY id")]

    def token_by_prefix(self, prefix: str) -> TokenRow | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM tokens WHERE prefix = ?", (prefix,)).fetchone()
        return TokenRow(**dict(row)) if row else None

    def revoke(self, name: str) -> bool:
        with self._write() as db:
            changed = db.execute("UPDATE tokens SET revoked_at = ? WHERE name = ? AND "
                                 "revoked_at IS NULL", (now(), name)).rowcount
        return changed > 0

    def touch(self, token_id: int) -> None:
        with self._write() as db:
            db.execute("UPDATE tokens SET last_used_at = ? WHERE id = ?", (now(), token_id))

    # ------------------------------------------------------------------------ jobs

    def insert(self, job: Job) -> Job:
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO jobs (id, token_id, course, exercises, files, client_ref, state, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (job.id, job.token_id, job.course, json.dumps(job.exercises),
                 json.dumps(job.files), job.client_ref, job.state.value, job.created_at))
            job.seq = cursor.lastrowid
        return job

    def job(self, job_id: str) -> Job | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return Job.from_row(row) if row else None

    def job_ids(self) -> set[str]:
        with self._connect() as db:
            return {row[0] for row in db.execute("SELECT id FROM jobs")}

    def jobs_in(self, state: JobState) -> list[Job]:
        with self._connect() as db:
            return [Job.from_row(row) for row in db.execute(
                "SELECT * FROM jobs WHERE state = ? ORDER BY seq", (state.value,))]

    def active_of(self, token_id: int) -> int:
        """The token's jobs queued or running."""
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM jobs WHERE token_id = ? AND state IN "
                              "(?, ?)", (token_id, JobState.QUEUED.value,
                                         JobState.RUNNING.value)).fetchone()[0]

    def position(self, job: Job) -> int | None:
        """1 for the next queued job to be graded; None once it is not queued."""
        if job.state != JobState.QUEUED:
            return None
        with self._connect() as db:
            ahead = db.execute("SELECT COUNT(*) FROM jobs WHERE state = ? AND seq <= ?",
                               (JobState.QUEUED.value, job.seq)).fetchone()[0]
        return ahead or None  # 0: a worker took it since `job` was read

    def counts(self) -> dict[str, int]:
        with self._connect() as db:
            found = dict(db.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state")
                         .fetchall())
        return {state.value: found.get(state.value, 0) for state in JobState}

    def claim(self, worker: str) -> Job | None:
        """The oldest queued job, now running on `worker`; None when none is queued."""
        with self._write() as db:
            row = db.execute("SELECT seq FROM jobs WHERE state = ? ORDER BY seq LIMIT 1",
                             (JobState.QUEUED.value,)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE jobs SET state = ?, worker = ?, started_at = ?, "
                       "attempts = attempts + 1, progress = '', slurm_job = NULL, "
                       "error = NULL, exit_code = NULL WHERE seq = ?",
                       (JobState.RUNNING.value, worker, now(), row["seq"]))
            return Job.from_row(db.execute("SELECT * FROM jobs WHERE seq = ?",
                                           (row["seq"],)).fetchone())

    def set_progress(self, job_id: str, text: str) -> None:
        with self._write() as db:
            db.execute("UPDATE jobs SET progress = ? WHERE id = ?", (text[:500], job_id))

    def set_slurm_job(self, job_id: str, slurm_job: str) -> None:
        with self._write() as db:
            db.execute("UPDATE jobs SET slurm_job = ? WHERE id = ?", (slurm_job, job_id))

    def finish(self, job_id: str, state: JobState, *, exit_code: int | None = None,
               error: str | None = None, score: float | None = None,
               max_score: float | None = None) -> None:
        with self._write() as db:
            db.execute("UPDATE jobs SET state = ?, finished_at = ?, exit_code = ?, error = ?, "
                       "score = ?, max_score = ? WHERE id = ?",
                       (state.value, now(), exit_code, error, score, max_score, job_id))

    def requeue(self, job_id: str, why: str) -> None:
        with self._write() as db:
            db.execute("UPDATE jobs SET state = ?, worker = NULL, slurm_job = NULL, "
                       "progress = ? WHERE id = ? AND state = ?",
                       (JobState.QUEUED.value, why, job_id, JobState.RUNNING.value))
