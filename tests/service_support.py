"""Helpers of the grading service's tests (tests/test_service*.py): a stand-in grader, the
service started as a real process on a free port of 127.0.0.1, an HTTP client (urllib) and
archives made in memory.

The stand-in grader replaces `python3 -m grader` (COURSE_SERVICE_GRADER) and reads what to do
from a JSON file (FAKE_GRADER_CONFIG), again for every grade, so a test can change it between
jobs: log its arguments, print progress lines, wait for a gate file, fail, and otherwise write
the report (a copy of a report file, its submission set), the HTML page, and exit."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import signal
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from grader import render
from helpers import PYTHON, ROOT, run_cli, sample_report

FAKE_GRADER = r'''
import json, os, sys, time
cfg = json.load(open(os.environ["FAKE_GRADER_CONFIG"]))
args = sys.argv[1:]
value = lambda flag: args[args.index(flag) + 1] if flag in args else None
submission = args[1]
files = sorted(os.path.relpath(os.path.join(d, f), submission)
               for d, _, names in os.walk(submission) for f in names)
with open(cfg["log"], "a") as log:
    log.write(json.dumps({"argv": args, "pid": os.getpid(), "files": files,
                          "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
                          "progress_every": os.environ.get("COURSE_PROGRESS_EVERY_S")}) + "\n")
print("grader: configuring the build", file=sys.stderr, flush=True)
print("grader: [1/1] ch01_programming_model/vector_add: checking", file=sys.stderr, flush=True)
gate = cfg.get("gate")
if gate:
    waited = 0.0
    while not os.path.exists(gate) and waited < 60:
        time.sleep(0.05)
        waited += 0.05
time.sleep(cfg.get("sleep", 0))
if cfg.get("fail"):
    print("grader: error: " + cfg["fail"], file=sys.stderr, flush=True)
    sys.exit(2)
report = json.load(open(cfg["report"]))
report["submission"] = submission
with open(value("--json"), "w") as out:
    json.dump(report, out)
if cfg.get("html", True):
    with open(value("--html"), "w") as out:
        out.write("<!doctype html><title>report</title><p>fake page</p>\n")
print("table of the grade")
sys.exit(cfg.get("exit", 0))
'''


def write_fake_grader(folder: Path, **config) -> tuple[Path, dict]:
    """The stand-in grader and its configuration file; the environment that makes the service
    use it."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "fake_grader.py"
    script.write_text(FAKE_GRADER)
    report = folder / "report-template.json"
    report.write_text(json.dumps(render.report_data(sample_report())))
    settings = {"log": str(folder / "grades.log"), "report": str(report), **config}
    path = folder / "fake_grader.json"
    path.write_text(json.dumps(settings))
    env = dict(os.environ, COURSE_SERVICE_GRADER=f"{PYTHON} -Su {script}",
               FAKE_GRADER_CONFIG=str(path))
    env.pop("COURSE_SECRET", None)
    return path, env


def configure(path: Path, **changes) -> None:
    settings = json.loads(path.read_text())
    settings.update(changes)
    for key in [k for k, v in changes.items() if v is None]:
        del settings[key]
    path.write_text(json.dumps(settings))


def grades(folder: Path) -> list[dict]:
    log = folder / "grades.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


# ------------------------------------------------------------------------------ the service

@dataclasses.dataclass
class Running:
    process: subprocess.Popen
    url: str
    log: Path

    def stop(self, sig=signal.SIGTERM, timeout: float = 20) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout)


def start_service(data: Path, env: dict, *args, log: Path | None = None,
                  timeout: float = 20) -> Running:
    """`serve --port 0` in a process of its own; returns once it says where it listens."""
    log = log or data.parent / f"service-{time.monotonic_ns()}.log"
    handle = log.open("w")
    process = subprocess.Popen([PYTHON, "-m", "grader", "serve", "--data", str(data),
                                "--port", "0", *map(str, args)], cwd=ROOT, env=env,
                               stdout=handle, stderr=subprocess.STDOUT)
    handle.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"serving on (http://\S+)", log.read_text())
        if found:
            return Running(process, found.group(1), log)
        if process.poll() is not None:
            raise AssertionError(f"serve ended with {process.returncode}:\n{log.read_text()}")
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"serve did not start:\n{log.read_text()}")


def new_token(data: Path, name: str, course: str = "course", env: dict | None = None) -> str:
    result = run_cli("serve-token", "add", "--name", name, "--course", course, "--data", data,
                     env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


# ------------------------------------------------------------------------------ HTTP

@dataclasses.dataclass
class Answer:
    status: int
    headers: object  # http.client.HTTPMessage: names in any case
    body: bytes

    @property
    def json(self):
        return json.loads(self.body)


def call(url: str, method: str = "GET", token: str | None = None, body: bytes | None = None,
         headers: dict | None = None, timeout: float = 20) -> Answer:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Answer(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers, error.read())


def submit(url: str, token: str, archive: bytes, query: str = "") -> Answer:
    return call(f"{url}/v1/submissions{query}", "POST", token, archive,
                {"Content-Type": "application/octet-stream"})


def wait_for(url: str, token: str, job: str, states=("done", "failed"),
             timeout: float = 30, every: float = 0.05) -> dict:
    """The job's view once in one of `states` (or at the time-out). Polling every 0.05 s
    reaches the default rate limit (600 a minute) after 30 s: a long wait polls less often."""
    deadline = time.monotonic() + timeout
    while True:
        view = call(f"{url}/v1/submissions/{job}", token=token).json
        if view["state"] in states or time.monotonic() > deadline:
            return view
        time.sleep(every)


def wait_until(check, timeout: float = 20, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.05)


# ------------------------------------------------------------------------------ archives

VECTOR_ADD = "ch01_programming_model/vector_add.cu"


def zip_of(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def tar_of(members: list[tuple[tarfile.TarInfo, bytes | None]], gz: bool = True) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w") as archive:
        for info, content in members:
            if content is not None:
                info.size = len(content)
            archive.addfile(info, io.BytesIO(content) if content is not None else None)
    return buffer.getvalue()


def file_info(name: str, kind=tarfile.REGTYPE, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    info.mode = 0o644
    return info


def workspace_zip(prefix: str = "") -> bytes:
    return zip_of({f"{prefix}{VECTOR_ADD}": "// a student's kernel\n",
                   f"{prefix}README.txt": "not an exercise file\n"})
