"""What the stages share: the grading options, the test programs' environment, clipping."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from grader import proc
from grader.manifest import Exercise

MESSAGE_LIMIT = 8 * 1024
SECRET_ENV = "COURSE_SECRET"  # where an instructor may give the secret instead of --secret
NO_GPU_EXIT = 77  # how test and benchmark binaries say "no GPU" (Meson reports it as skipped)


@dataclass
class GradeOptions:
    root: Path
    submission: Path
    build_dir: Path
    seed: int
    build_only: bool = False
    sanitizer: bool = True
    benchmark: bool = True
    jobs: int | None = None
    output_limit: int = proc.DEFAULT_OUTPUT_LIMIT
    cuda_arch: str = "auto"
    extra_env: dict = field(default_factory=dict)
    # Instructors: a secret mixed into the inputs' seed (never printed or recorded), and the
    # hidden test cases compiled in (meson -Dhidden_tests=true).
    secret: str | None = field(default=None, repr=False)
    hidden: bool = False
    # Exercises taken through their untimed stages at once (None: grader.pipeline's default).
    parallel: int | None = None
    # The UUID of the GPU this grade is pinned to (batch --gpus): its programs see only it.
    pin_gpu: str = ""
    # Measurements disturbed by another process on the GPU are scored anyway, and marked.
    allow_shared_gpu: bool = False

    @property
    def input_seed(self) -> int:
        """The seed the test and benchmark programs get: the run's seed, or with a secret an
        HMAC of it, so the report's seed alone does not replay the inputs."""
        if not self.secret:
            return self.seed
        digest = hmac.new(self.secret.encode(), str(self.seed).encode(), hashlib.sha256)
        return int.from_bytes(digest.digest()[:8], "big")

    @property
    def work_dir(self) -> Path:
        """Reports, event streams and benchmark JSON of this run; emptied at its start."""
        return self.build_dir / "grading"


def exercise_work_dir(options: GradeOptions, ex: Exercise) -> Path:
    folder = options.work_dir / ex.name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def program_env(options: GradeOptions, **extra: str) -> dict:
    """The environment of a test or benchmark binary, with the run's seed. Never the secret:
    the student's code runs in these programs and could print it."""
    env = dict(os.environ)
    env.pop(SECRET_ENV, None)
    env.update({"COURSE_SEED": str(options.input_seed), "GTEST_COLOR": "no",
                "CUDA_MODULE_LOADING": "EAGER"})
    if options.pin_gpu:
        env["CUDA_VISIBLE_DEVICES"] = options.pin_gpu
    env.update(options.extra_env)
    env.update(extra)
    return env


def clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """At most `limit` characters: the head and the tail, the middle cut and counted."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n[... {len(text) - limit} characters cut ...]\n" + text[-half:]


NONCE_ENV = "COURSE_NONCE_FILE"


def issue_nonce(path: Path) -> str:
    """A fresh nonce for one run of a program, in a file only its owner can read: the course
    harness reads and deletes it before student code runs (support/src/results.cpp) and marks
    every result with it, so results the student's code forges are recognised."""
    nonce = secrets.token_hex(16)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(nonce + "\n")
    return nonce



def read_json(path: Path):
    """The JSON a program wrote, or None where there is no file or it is not JSON (cut short)."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except json.JSONDecodeError:
        return None


def run_reporting(options: GradeOptions, command: list[str], out: Path, nonce_file: Path,
                  timeout_s: float) -> tuple[proc.ProcResult, object, str]:
    """Runs a program of the course's harness (a benchmark, a ceilings program) that writes its
    report as JSON to `out`, marked with a fresh nonce given through `nonce_file`: (how the
    program ended, the report or None, the nonce a report of the harness's own carries)."""
    out.unlink(missing_ok=True)
    nonce = issue_nonce(nonce_file)
    result = proc.run(command, timeout_s, env=program_env(options, **{NONCE_ENV: str(nonce_file)}),
                      output_limit=options.output_limit)
    nonce_file.unlink(missing_ok=True)
    return result, read_json(out), nonce
