"""What the stages share: the grading options, the test programs' environment, clipping."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from grader import proc, sandbox
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
    # grade --profile: after its benchmark, each exercise's timed kernels under Nsight Compute
    # (grader/stages/profile.py); never points.
    profile: bool = False
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
    # compute-sanitizer tools run at once for one exercise: more than one only when the grade
    # leaves cores idle (fewer exercises than workers: grader.pipeline sets it).
    sanitizer_tools_at_once: int = 1
    # Processes a tests run's cases are split over (GoogleTest's sharding), likewise.
    test_shards: int = 1
    # The UUID of the GPU this grade is pinned to (batch --gpus): its programs see only it.
    pin_gpu: str = ""
    # Measurements disturbed by another process on the GPU are scored anyway, and marked.
    allow_shared_gpu: bool = False
    # Whether student programs must run in the sandbox (grader/sandbox.py), and the sandbox
    # the run found (set by the pipeline once the launcher is built).
    sandbox_mode: sandbox.Mode = sandbox.Mode.AUTO
    sandbox: sandbox.Sandbox = sandbox.OFF

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


def host_cores() -> int:
    """The host cores this process may use (a Slurm task's share, not the node's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def exercise_work_dir(options: GradeOptions, ex: Exercise) -> Path:
    folder = options.work_dir / ex.name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def program_env(options: GradeOptions, scratch: Path | None = None, **extra: str) -> dict:
    """The environment of a test or benchmark binary, with the run's seed and malloc's huge
    pages (with_huge_pages). Never the secret: the student's code runs in these programs and
    could print it. With `scratch`, the program's home and temporary folder are its scratch
    folder, the one place it may write."""
    env = dict(os.environ)
    env.pop(SECRET_ENV, None)
    env.pop(proc.PROCESS_LOG_ENV, None)  # the grader's own log, none of the program's business
    if scratch is not None:
        env.update({"HOME": str(scratch), "TMPDIR": str(scratch)})
    env.update({"COURSE_SEED": str(options.input_seed), "GTEST_COLOR": "no",
                "CUDA_MODULE_LOADING": "EAGER"})
    if options.pin_gpu:
        env["CUDA_VISIBLE_DEVICES"] = options.pin_gpu
    env.update(options.extra_env)
    env.update(extra)
    return with_huge_pages(env)


# glibc's malloc asks for transparent huge pages on the memory it maps (glibc 2.35 and later;
# older ones ignore the tunable). A test program's inputs, references and copies are large
# buffers made and freed case after case, and eight programs faulting them in 4 KiB pages at
# once kept the host's kernel busy; a benchmark's host side (inputs, references, read-backs of
# hundreds of MiB) is time the next benchmark waits for (docs/measurements/grading_speed.md).
# Every score is a ratio of device-side times; the pageable copies some benchmarks show beside
# them are not graded.
HUGE_PAGES_TUNABLE = "glibc.malloc.hugetlb=1"


def with_huge_pages(env: dict) -> dict:
    """`env` with malloc's huge pages added to whatever GLIBC_TUNABLES it already holds."""
    current = env.get("GLIBC_TUNABLES", "")
    if HUGE_PAGES_TUNABLE.split("=")[0] not in current:
        env["GLIBC_TUNABLES"] = f"{current}:{HUGE_PAGES_TUNABLE}" if current \
            else HUGE_PAGES_TUNABLE
    return env


def clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """At most `limit` characters: the head and the tail, the middle cut and counted."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n[... {len(text) - limit} characters cut ...]\n" + text[-half:]


NONCE_ENV = "COURSE_NONCE_FILE"


def student_scratch(options: GradeOptions, ex: Exercise, name: str) -> Path:
    """A fresh, empty folder for one run of a student program: the only place the sandbox lets
    it write, where the harness writes the run's results and finds its nonce. Whatever a
    previous program left or planted there is gone."""
    return sandbox.fresh_folder(exercise_work_dir(options, ex) / name)


def student_command(options: GradeOptions, command: list[str], scratch: Path) -> list[str]:
    """`command` as the run's sandbox runs it (as is, without one)."""
    return options.sandbox.wrap(command, scratch)


def issue_nonce(path: Path) -> str:
    """A fresh nonce for one run of a program, in a file only its owner can read: the course
    harness reads and deletes it before student code runs (support/src/results.cpp) and marks
    every result with it, so results the student's code forges are recognised."""
    nonce = secrets.token_hex(16)
    sandbox.remove(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(nonce + "\n")
    return nonce



def read_json(path: Path):
    """The JSON a program wrote, or None where there is no file or it is not JSON (cut short)."""
    if not sandbox.regular_file(path):
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (json.JSONDecodeError, OSError):
        return None


def run_reporting(options: GradeOptions, command: list[str], out: Path, nonce_file: Path,
                  timeout_s: float, scratch: Path | None = None
                  ) -> tuple[proc.ProcResult, object, str]:
    """Runs a program of the course's harness (a benchmark, a ceilings program) that writes its
    report as JSON to `out`, marked with a fresh nonce given through `nonce_file`: (how the
    program ended, the report or None, the nonce a report of the harness's own carries). With
    `scratch` (a program with student code in it) it runs in the sandbox, writing only there."""
    sandbox.remove(out)
    nonce = issue_nonce(nonce_file)
    if scratch is not None:
        command = student_command(options, command, scratch)
    result = proc.run(command, timeout_s,
                      env=program_env(options, scratch, **{NONCE_ENV: str(nonce_file)}),
                      output_limit=options.output_limit)
    sandbox.remove(nonce_file)
    return result, read_json(out), nonce
