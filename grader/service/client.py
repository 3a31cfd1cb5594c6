"""The grading service seen from a platform's job: `gradescope-run --service URL` and
`prairielearn-run --service URL` send the laid-out submission to a service (grader serve) on
a GPU machine instead of grading here, wait for its grade and read back its report, from
which they write the platform's results as they would after a grade of their own. Standard
library only (urllib): the platform's image needs neither a GPU, nor CUDA, nor Flask."""

from __future__ import annotations

import io
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Callable

from grader import model, render
from grader.errors import GraderError

TOKEN_ENV = "COURSE_SERVICE_TOKEN"
FIRST_POLL_S = 0.5  # the first look at a job; each next one twice as late, at most POLL_S
POLL_S = 5.0


def token_from(path: Path | None) -> str:
    """The service's token: the file --service-token-file names, else $COURSE_SERVICE_TOKEN."""
    if path is not None:
        try:
            token = path.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise GraderError(f"--service-token-file {path}: cannot read it "
                              f"({error.strerror})") from None
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise GraderError(f"--service needs the course's token: --service-token-file PATH, or "
                          f"${TOKEN_ENV}")
    return token


def archive(submission: Path) -> bytes:
    """The submission's chapter folders as a zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as made:
        for path in sorted(submission.rglob("*")):
            if path.is_file() and not path.is_symlink():
                made.write(path, path.relative_to(submission).as_posix())
    return buffer.getvalue()


class Client:
    def __init__(self, url: str, token: str, timeout_s: float = 60.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s

    def call(self, path: str, body: bytes | None = None) -> tuple[int, dict, bytes]:
        """(status, headers, body); GraderError, one line, when the service cannot be reached
        or refuses (the service's own message)."""
        request = urllib.request.Request(
            self.url + path, data=body, method="POST" if body is not None else "GET",
            headers={"Authorization": f"Bearer {self.token}",
                     **({"Content-Type": "application/zip"} if body is not None else {})})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                return answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as error:
            text = error.read()
            try:
                said = json.loads(text)["error"]["message"]
            except (ValueError, KeyError, TypeError):
                said = text.decode("utf-8", "replace").strip()[:300] or error.reason
            if error.code in (429, 503):
                return error.code, dict(error.headers), text
            raise GraderError(f"the grading service answered {error.code}: {said}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise GraderError(f"the grading service at {self.url} cannot be reached "
                              f"({reason})") from None


def grade_with_service(url: str, token: str, work: Path, names: list[str] = (),
                       reference: str = "", wait_s: float = 3600.0, poll_s: float = POLL_S,
                       say: Callable[[str], None] = lambda line: None
                       ) -> Callable[[Path], model.Report]:
    """A grade function for exports._platform_run: the service grades the submission; its
    report, saved as work/report.json, is returned. GraderError (the platform's results then
    say why) when the service refuses, cannot grade it or takes longer than `wait_s`."""
    client = Client(url, token)

    def grade(submission: Path) -> model.Report:
        query = urllib.parse.urlencode([("exercise", n) for n in names]
                                       + ([("client_ref", reference)] if reference else []))
        body = archive(submission)
        deadline = time.monotonic() + wait_s
        while True:
            status, headers, answer = client.call(f"/v1/submissions?{query}", body)
            if status == 202:
                break
            _pause(headers, deadline, "a place in the service's queue")
        job = json.loads(answer)["id"]
        say(f"the grading service took the submission as {job}")
        last, pause = "", FIRST_POLL_S
        while True:
            status, headers, answer = client.call(f"/v1/submissions/{job}")
            if status != 200:
                _pause(headers, deadline, "the grade")
                continue
            view = json.loads(answer)
            if view["state"] == "failed":
                raise GraderError(view.get("error") or "the grading service could not grade it")
            if view["state"] == "done":
                break
            now = (f"position {view['position']} in the queue" if view["state"] == "queued"
                   else view.get("progress") or "grading")
            if now != last:
                say(f"the grading service: {now}")
                last = now
            if time.monotonic() > deadline:
                raise GraderError(f"the grading service did not grade it within {wait_s:g} s "
                                  f"(submission {job}, {view['state']})")
            time.sleep(pause)
            pause = min(2 * pause, poll_s)
        _, _, report = client.call(f"/v1/submissions/{job}/report")
        path = work / "report.json"
        render.write_atomically(path, report.decode("utf-8"))
        return model.Report.load(path)

    return grade


def _pause(headers: dict, deadline: float, what: str) -> None:
    wait = float(next((v for k, v in headers.items() if k.lower() == "retry-after"), 5))
    if time.monotonic() + wait > deadline:
        raise GraderError(f"the grading service was busy for too long waiting for {what}")
    time.sleep(min(wait, 60.0))
