"""The sandbox every student program runs in (tests, sanitizer runs, benchmarks, the listing of
cases): the course's launcher `course_sandbox` (support/sandbox/course_sandbox.cpp), built in
each build directory with the course, run around the program.

Inside: no network; the system's libraries, the CUDA toolkit and the program itself readable;
the GPU's device files and /proc writable; one scratch folder of the run's own writable, where
the harness writes its results; nothing else (not the course, not the solutions or hidden
tests, not other submissions, not the grader's own files); other processes out of sight and out
of reach of signals and ptrace. `probe()` asks the launcher what this machine allows; where it
cannot be had the report says `sandbox: unavailable` and why, and a grader told to require it
(`batch`, Slurm, the Gradescope runner, unless `--no-sandbox`) stops with exit status 2.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from grader import proc, tools
from grader.errors import GraderError

LAUNCHER = "course_sandbox"
PROBE_TIMEOUT_S = 30
# A program's files in its scratch folder: far more than the harness writes, far less than a
# disk.
FILE_SIZE_LIMIT_MIB = 1024


class Mode(StrEnum):
    AUTO = "auto"          # used where the machine allows it; the report says when not
    REQUIRED = "required"  # no sandbox, no grade (exit 2)
    OFF = "off"            # --no-sandbox


class Status(StrEnum):
    ON = "on"
    OFF = "off"                  # turned off by --no-sandbox
    UNAVAILABLE = "unavailable"  # the machine does not allow it


@dataclass(frozen=True)
class Sandbox:
    status: Status
    reason: str = ""
    launcher: Path | None = None
    capabilities: dict = field(default_factory=dict)
    readable: tuple[str, ...] = ()
    # Nsight Compute inside with the program it profiles: the namespace's own loopback up.
    profiler: bool = False

    @property
    def on(self) -> bool:
        return self.status == Status.ON

    def wrap(self, command: list[str], scratch: Path) -> list[str]:
        """`command` run inside the sandbox, writing only to `scratch` (as is, when off)."""
        if not self.on or self.launcher is None:
            return list(command)
        reads = [*self.readable, *(c for c in command if os.path.isabs(c) and os.path.exists(c))]
        args = [str(self.launcher), "--fsize-mib", str(FILE_SIZE_LIMIT_MIB),
                "--write", str(scratch), *(["--profiler"] if self.profiler else [])]
        for path in dict.fromkeys(reads):
            args += ["--read", path]
        return args + ["--", *command]

    def limits(self) -> list[str]:
        """What this machine's sandbox does not close, in words (empty when it closes all)."""
        out = []
        if self.on and not self.capabilities.get("pid_namespace"):
            out.append("other processes are visible in /proc (no PID namespace here)")
        if self.on and not self.capabilities.get("network_namespace"):
            out.append("only TCP is refused (no network namespace here)")
        return out

    def record(self) -> dict:
        """The report's `sandbox` entry."""
        out: dict = {"status": str(self.status)}
        if self.reason:
            out["reason"] = self.reason
        if self.capabilities:
            out["capabilities"] = dict(self.capabilities)
        if self.limits():
            out["limits"] = self.limits()
        return out

    def describe(self) -> str:
        """One line for the terminal."""
        if self.status == Status.ON:
            limits = self.limits()
            return "sandbox: on" + (f" ({'; '.join(limits)})" if limits else "")
        return f"sandbox: {self.status} ({self.reason})"


OFF = Sandbox(Status.OFF, "--no-sandbox")


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where there is none (the grader's own quick look,
    before anything is built: batch refuses up front)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def check_kernel(mode: Mode) -> None:
    """Refuses a required sandbox on a kernel without Landlock, before any work."""
    if mode == Mode.REQUIRED and landlock_abi() < 1:
        raise GraderError(unavailable_message("this kernel has no Landlock (Linux 5.13 or "
                                              "newer with Landlock enabled)"))


def unavailable_message(reason: str) -> str:
    return (f"no sandbox for student programs: {reason}; grade without one knowingly with "
            "--no-sandbox")


def probe(launcher: Path) -> dict | None:
    """What the launcher finds this machine allows, or None when it cannot say."""
    if not launcher.is_file():
        return None
    result = proc.run([str(launcher), "--probe"], PROBE_TIMEOUT_S, output_limit=4096)
    if result.returncode != 0:
        return None
    try:
        found = json.loads(result.output.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return None
    return found if isinstance(found, dict) else None


def prepare(mode: Mode, build_dir: Path) -> Sandbox:
    """The sandbox of a grading run, from the launcher built in `build_dir`; GraderError when
    one is required and this machine cannot give it."""
    if mode == Mode.OFF:
        return OFF
    launcher = build_dir / LAUNCHER
    found = probe(launcher)
    if found is None:
        reason = (f"the launcher {launcher.name} did not build" if not launcher.is_file()
                  else f"the launcher {launcher.name} could not probe this machine")
    elif int(found.get("landlock_abi", 0)) < 1:
        reason = "this kernel has no Landlock"
    elif not found.get("network_namespace") and int(found.get("landlock_abi", 0)) < 4:
        reason = ("no network namespace (user namespaces are disabled) and a Landlock too old "
                  "to refuse connections")
    else:
        return Sandbox(Status.ON, launcher=launcher, capabilities=found,
                       readable=tuple(readable_tools()))
    if mode == Mode.REQUIRED:
        raise GraderError(unavailable_message(reason))
    return Sandbox(Status.UNAVAILABLE, reason, capabilities=found or {})


def readable_tools() -> list[str]:
    """Beyond the system's folders: the CUDA toolkit (shared libraries such as cuBLAS,
    compute-sanitizer and what it loads), wherever it is installed."""
    out = []
    for name in ("nvcc", "compute-sanitizer"):
        found = tools.find(name)
        if found:
            real = Path(found).resolve()
            # <toolkit>/bin/nvcc, <toolkit>/compute-sanitizer/compute-sanitizer
            out.append(str(real.parent.parent))
    return [p for p in dict.fromkeys(out) if p not in ("/", "")]


def fresh_folder(path: Path) -> Path:
    """An empty folder at `path`, whatever was there (a file, a link, a folder a student
    program planted): the grader's own scratch for one program run."""
    remove(path)
    path.mkdir(parents=True)
    return path


def remove(path: Path) -> None:
    """Removes `path` whatever it is, never following a link, never raising for what is not
    there; a folder the grader cannot empty is moved aside."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(path, ignore_errors=True)
        if os.path.lexists(path):
            path.rename(path.with_name(f"{path.name}.stale-{os.getpid()}-{id(path)}"))
    else:
        path.unlink(missing_ok=True)


def regular_file(path: Path) -> bool:
    """Whether `path` is a plain file, not a link or a folder: what the grader reads back from
    a scratch folder a student program could write."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
