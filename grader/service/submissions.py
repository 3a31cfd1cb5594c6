"""What the API does, apart from HTTP: who calls (the token, its rate), accepting an upload
into a job, and what a client reads of a job (its state, the report, the platforms' results).
Every refusal is an ApiError: an HTTP status, a short code and one line saying why."""

from __future__ import annotations

import collections
import math
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from grader import __version__, exports, manifest, model
from grader.errors import GraderError
from grader.service import archive
from grader.service.jobs import (HTML, REPORT, SUBMISSION, UNPACKED, Job, JobState, Limits,
                                 Mode, job_folder)
from grader.service.store import Store, TokenRow
from grader.service.tokens import Verifier

MAX_REFERENCE = 200  # characters of a client's reference


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict | None = None,
                 extra: dict | None = None):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = headers or {}
        self.extra = extra or {}


class RateLimiter:
    """At most `per_minute` requests per token in any 60 s (kept in memory: a restart
    forgets them)."""

    def __init__(self, per_minute: int, clock=time.monotonic):
        self.per_minute = per_minute
        self.clock = clock
        self.seen: dict[int, collections.deque] = collections.defaultdict(collections.deque)
        self.lock = threading.Lock()

    def retry_after(self, token_id: int) -> int:
        """0 when this request may go (and it is counted), else the seconds to wait."""
        now = self.clock()
        with self.lock:
            times = self.seen[token_id]
            while times and now - times[0] >= 60:
                times.popleft()
            if len(times) >= self.per_minute:
                return max(1, math.ceil(60 - (now - times[0])))
            times.append(now)
            return 0


@dataclass
class Service:
    data: Path
    store: Store
    limits: Limits
    course: list[manifest.Exercise]
    mode: Mode
    build_only: bool
    workers: int
    wake: threading.Event

    def __post_init__(self):
        self.verifier = Verifier(self.store)
        self.rate = RateLimiter(self.limits.requests_per_minute)

    # ------------------------------------------------------------------ who calls

    def caller(self, authorization: str | None) -> TokenRow:
        """The token of an `Authorization: Bearer <token>` header; 401 without a genuine one,
        403 for a revoked one, 429 past the token's rate."""
        scheme, _, token = (authorization or "").partition(" ")
        challenge = {"WWW-Authenticate": 'Bearer realm="cuda-course grading service"'}
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "no_token", "give the course's token: Authorization: Bearer "
                           "<token> ('python3 -m grader serve-token add' makes one)", challenge)
        row = self.verifier.check(token.strip())
        if row is None:
            raise ApiError(401, "bad_token", "this token is not one of this service's", challenge)
        if row.revoked_at:
            raise ApiError(403, "revoked_token", f"this token ({row.name}) was revoked on "
                           f"{row.revoked_at}")
        wait = self.rate.retry_after(row.id)
        if wait:
            raise ApiError(429, "rate_limited", f"more than {self.limits.requests_per_minute} "
                           f"requests in a minute with this token; try again in {wait} s",
                           {"Retry-After": str(wait)})
        return row

    def check_room(self, token: TokenRow, length: int | None) -> None:
        """Before the body is read: 413 for an upload over the limit, 429 for a full queue."""
        if length is not None and length > self.limits.max_upload_bytes:
            raise ApiError(413, "too_large", f"the upload is {length} bytes, more than the "
                           f"{self.limits.max_upload_bytes} this service takes")
        active = self.store.active_of(token.id)
        if active >= self.limits.max_queued:
            raise ApiError(429, "queue_full", f"this token has {active} submissions queued or "
                           f"being graded, the most it may have; send this one once some are "
                           "done", {"Retry-After": "60"})

    # ------------------------------------------------------------------ accepting

    def accept(self, token: TokenRow, body: bytes, names: list[str], reference: str) -> Job:
        """A new queued job from an archive: 400 for an unknown exercise, a refused archive
        or one without an exercise file; nothing of a refused upload is kept."""
        if len(body) > self.limits.max_upload_bytes:
            raise ApiError(413, "too_large", f"the upload is more than the "
                           f"{self.limits.max_upload_bytes} bytes this service takes")
        if len(reference) > MAX_REFERENCE or not reference.isprintable():
            raise ApiError(400, "bad_reference", f"the client reference must be printable, at "
                           f"most {MAX_REFERENCE} characters")
        try:
            chosen = manifest.select(self.course, names)
        except GraderError as error:
            raise ApiError(400, "unknown_exercise", str(error)) from None
        kind = archive.kind(body[:512])
        if kind is None:
            raise ApiError(400, "bad_archive", "the upload is not a .zip or .tar.gz archive (send "
                           "the archive as the request's body, or as the multipart field "
                           "'submission')")
        job = Job(id=secrets.token_hex(10), token_id=token.id, course=token.course,
                  exercises=list(names), files=[], client_ref=reference)
        folder = job_folder(self.data, job.id)
        try:
            folder.mkdir(parents=True)
            upload = folder / f"upload.{kind}"
            upload.write_bytes(body)
            archive.unpack(upload, folder / UNPACKED, self.limits)
            job.files = exports.layout_upload(folder / UNPACKED, chosen, folder / SUBMISSION)
            shutil.rmtree(folder / UNPACKED)
            if not job.files:
                example = ", ".join(f"{ex.chapter}/{ex.files[0]}" for ex in chosen[:2])
                raise ApiError(400, "no_exercise_files", "the archive holds no file of the "
                               f"exercises asked for (e.g. {example}): send the chapter folders "
                               "of your workspace/")
            self.store.insert(job)
        except archive.ArchiveError as error:
            shutil.rmtree(folder, ignore_errors=True)
            raise ApiError(400, "bad_archive", str(error)) from None
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        self.wake.set()
        return self.store.job(job.id) or job

    # ------------------------------------------------------------------ reading

    def job_for(self, token: TokenRow, job_id: str) -> Job:
        """A job of the token's course; 404 for any other (its id says nothing)."""
        job = self.store.job(job_id) if job_id.isalnum() and len(job_id) <= 64 else None
        if job is None or job.course != token.course:
            raise ApiError(404, "not_found", f"no submission {job_id[:64]!r} for this course")
        return job

    def view(self, job: Job) -> dict:
        base = f"/v1/submissions/{job.id}"
        return {"id": job.id, "state": job.state.value, "position": self.store.position(job),
                "client_ref": job.client_ref, "exercises": job.exercises, "files": job.files,
                "progress": job.progress, "attempts": job.attempts,
                "created_at": job.created_at, "started_at": job.started_at,
                "finished_at": job.finished_at, "error": job.error,
                "exit_code": job.exit_code, "score": job.score, "max_score": job.max_score,
                "build_only": self.build_only,
                "links": {"self": base, "report": f"{base}/report",
                          "gradescope": f"{base}/gradescope",
                          "prairielearn": f"{base}/prairielearn", "html": f"{base}/html"}}

    def _finished(self, job: Job) -> None:
        if not job.state.finished:
            raise ApiError(409, "not_finished", f"the submission is {job.state.value}; ask "
                           f"GET /v1/submissions/{job.id} until it is done",
                           {"Retry-After": "5"}, {"state": job.state.value})

    def _report(self, job: Job) -> model.Report:
        try:
            return model.Report.load(job.folder(self.data) / REPORT)
        except GraderError as error:
            raise ApiError(500, "report_unreadable", str(error)) from None

    def report_text(self, job: Job) -> str:
        self._finished(job)
        if job.state == JobState.FAILED:
            raise ApiError(409, "failed", f"the submission could not be graded: {job.error}",
                           extra={"state": job.state.value})
        try:
            return (job.folder(self.data) / REPORT).read_text(encoding="utf-8")
        except OSError as error:
            raise ApiError(500, "report_unreadable", f"the report cannot be read "
                           f"({error.strerror})") from None

    def platform_results(self, job: Job, platform: str) -> dict:
        """Gradescope's or PrairieLearn's results.json, as gradescope-run and
        prairielearn-run write them: with the reason, when the grade failed."""
        self._finished(job)
        view, failure = {"gradescope": (exports.gradescope, exports.gradescope_failure),
                         "prairielearn": (exports.prairielearn,
                                          exports.prairielearn_failure)}[platform]
        if job.state == JobState.FAILED:
            return failure(f"The grader could not run: {job.error}")
        report = self._report(job)
        if report.options.get("build_only"):
            raise ApiError(409, "build_only", "this service grades with --build-only: nothing "
                           "ran, so there is no score to give a platform")
        return view(report)

    def html(self, job: Job) -> Path:
        self._finished(job)
        page = job.folder(self.data) / HTML
        if job.state != JobState.DONE or not page.is_file():
            raise ApiError(404, "no_html", "no HTML page for this submission (it needs jinja2 "
                           "and matplotlib on the grading machine, and a finished grade)")
        return page

    def health(self) -> dict:
        return {"status": "ok", "version": __version__, "mode": self.mode.value,
                "build_only": self.build_only, "workers": self.workers,
                "jobs": self.store.counts()}
