"""Running untrusted programs: own process group, wall-clock limit, bounded output.

A student's binary may hang, crash, fork, or print gigabytes. run() always returns: on time-out
the whole process group gets SIGTERM then SIGKILL; output beyond the limit keeps its head and
its tail and drops the middle, so memory stays bounded whatever the program prints.
"""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, TypeVar

DEFAULT_OUTPUT_LIMIT = 64 * 1024

# A start that fails for want of something of the moment is tried again: the kernel out of
# processes or memory (EAGAIN, ENOMEM), or an exec that could not read its own arguments
# (EFAULT, seen once in CI while other threads of the test process started programs). A program
# that is missing or not executable fails at once.
TRANSIENT_START_ERRORS = frozenset({errno.EAGAIN, errno.ENOMEM, errno.EFAULT})
START_ATTEMPTS = 4
_Started = TypeVar("_Started")

# Programs running now, by process group, so that an interrupt seen by the main thread can end
# those that other threads started (grader/pipeline.py grades exercises in parallel); once
# stopping is set, no new program starts.
_running: dict[int, subprocess.Popen] = {}
_running_lock = threading.Lock()
_stopping = threading.Event()

# Where every program run() started is logged, one JSON line each (its command, when it began,
# how long it ran, how it ended), when this variable names a file: what a grade's time went on,
# process by process (scripts/process_costs.py sums it up).
PROCESS_LOG_ENV = "COURSE_GRADER_PROCESS_LOG"
_log_lock = threading.Lock()


class Stopped(Exception):
    """Raised in a thread asked to start a program after stop_all()."""


def stop_all() -> None:
    """Ends every program run() has running, in every thread, and refuses new ones until
    resume()."""
    _stopping.set()
    with _running_lock:
        running = list(_running.items())
    for pgid, process in running:
        _kill_group(pgid, 0.5, process)


def resume() -> None:
    _stopping.clear()


def stopping() -> bool:
    """Whether stop_all() was called and resume() not yet: what waits in a thread gives up."""
    return _stopping.is_set()


@dataclass
class ProcResult:
    command: list[str]
    returncode: int | None  # None when it could not start
    timed_out: bool
    duration_s: float
    output: str
    output_bytes: int      # everything it printed, kept or not
    truncated: bool
    start_error: str = ""

    @property
    def signal_name(self) -> str:
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return ""

    def describe_exit(self) -> str:
        if self.start_error:
            return f"could not start: {self.start_error}"
        if self.timed_out:
            return f"timed out after {self.duration_s:.0f} s and was killed"
        if self.signal_name:
            return f"killed by {self.signal_name}"
        return f"exit status {self.returncode}"


class _Collector:
    """Keeps the first and last `limit / 2` bytes of a stream."""

    def __init__(self, limit: int):
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
            self.tail_size -= len(self.tail.popleft())

    def text(self) -> tuple[str, bool]:
        tail = b"".join(self.tail)
        if len(tail) > self.tail_limit:
            tail = tail[-self.tail_limit:]
        kept = len(self.head) + len(tail)
        if kept >= self.total:
            return (bytes(self.head) + tail).decode("utf-8", "replace"), False
        dropped = self.total - kept
        marker = f"\n[... {dropped} bytes of output cut ...]\n".encode()
        return (bytes(self.head) + marker + tail).decode("utf-8", "replace"), True


def _kill_group(pgid: int, grace_s: float, proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
            if sig == signal.SIGKILL:
                return
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; make sure nothing else in its group lives on.
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return


def start_retrying(start: Callable[[], _Started], attempts: int = START_ATTEMPTS,
                   pause_s: float = 0.05) -> _Started:
    """start(), again after a short pause (doubling) while it raises one of
    TRANSIENT_START_ERRORS; the last attempt's error, or any other, goes to the caller."""
    for attempt in range(attempts):
        try:
            return start()
        except OSError as error:
            if error.errno not in TRANSIENT_START_ERRORS or attempt == attempts - 1:
                raise
            time.sleep(pause_s * 2 ** attempt)
    raise ValueError("attempts must be at least 1")


def run(command: list[str], timeout_s: float, *, cwd=None, env=None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT, grace_s: float = 3.0,
        on_line: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None) -> ProcResult:
    """Runs `command` in its own process group with a time limit, keeping the head and tail
    of its output; `on_line`, if given, sees each complete line as it comes (progress). Once
    `cancel` is set the program is ended as at its time limit (a run started ahead of knowing
    whether it is needed, and then not needed)."""
    started = time.monotonic()
    if _stopping.is_set():
        raise Stopped("the grading was interrupted")
    try:
        proc = start_retrying(lambda: subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True))
    except OSError as error:
        return ProcResult(list(map(str, command)), None, False, 0.0, "", 0, False,
                          start_error=str(error))
    with _running_lock:
        _running[proc.pid] = proc
    try:
        # stop_all() sets _stopping before it lists the programs: one that started in another
        # thread meanwhile, too late for its list, sees the flag here and is ended.
        if _stopping.is_set():
            _kill_group(proc.pid, 0.5, proc)
            raise Stopped("the grading was interrupted")
        result = _supervise(proc, command, started, timeout_s, output_limit, grace_s,
                            on_line, cancel)
        _log(result, time.time() - result.duration_s)
        return result
    finally:
        with _running_lock:
            _running.pop(proc.pid, None)


def _log(result: "ProcResult", began: float) -> None:
    path = os.environ.get(PROCESS_LOG_ENV)
    if not path:
        return
    line = json.dumps({"command": result.command, "began": round(began, 3),
                       "duration_s": round(result.duration_s, 3),
                       "returncode": result.returncode, "timed_out": result.timed_out,
                       "thread": threading.current_thread().name})
    with _log_lock, open(path, "a", encoding="utf-8") as log:
        log.write(line + "\n")


# How often a run that may be cancelled looks at its cancel flag.
CANCEL_POLL_S = 0.1


def _wait(proc: subprocess.Popen, command: list[str], deadline: float, timeout_s: float,
          cancel: threading.Event | None) -> None:
    """Until the program exits (TimeoutExpired at the deadline; return early once `cancel` is
    set). Woken by the kernel the moment it exits, through a pidfd: Popen.wait with a time
    limit polls every 50 ms, which a grade of a few hundred short programs would pay each
    time."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux 5.3 or later: Popen's own polling
        pidfd = None
    exited = None
    if pidfd is not None:  # poll, not select: a busy grader's descriptors may pass 1024
        exited = select.poll()
        exited.register(pidfd, select.POLLIN)
    try:
        while proc.poll() is None:
            if cancel is not None and cancel.is_set():
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(command, timeout_s)
            pause = left if cancel is None else min(CANCEL_POLL_S, left)
            if pidfd is None:
                if cancel is None:
                    proc.wait(timeout=pause)
                else:
                    cancel.wait(pause)
            else:
                exited.poll(pause * 1000)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _supervise(proc: subprocess.Popen, command: list[str], started: float, timeout_s: float,
               output_limit: int, grace_s: float,
               on_line: Callable[[str], None] | None,
               cancel: threading.Event | None = None) -> ProcResult:
    collector = _Collector(output_limit)

    def pump() -> None:
        assert proc.stdout is not None
        pending = b""
        while True:
            chunk = proc.stdout.read1(65536)
            if not chunk:
                break
            collector.add(chunk)
            if on_line is not None:
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    try:
                        on_line(line.decode("utf-8", "replace"))
                    except Exception:  # a progress display must never stop the build
                        pass

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        _wait(proc, command, started + timeout_s, timeout_s, cancel)
    except subprocess.TimeoutExpired:
        timed_out = True
    except BaseException:
        # Ctrl-C or a stopped batch: the program has its own session, so it would live on.
        _kill_group(proc.pid, 0.5, proc)
        raise
    _kill_group(proc.pid, grace_s if timed_out else 0.5, proc)
    if proc.poll() is None:  # pragma: no cover - only if the kernel refuses SIGKILL
        proc.kill()
        proc.wait()
    reader.join(timeout=10)
    duration = time.monotonic() - started
    text, truncated = collector.text()
    return ProcResult(list(map(str, command)), proc.returncode, timed_out, duration, text,
                      collector.total, truncated)
