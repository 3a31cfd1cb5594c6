"""Graders on one machine take turns on a GPU: a machine-wide lock per GPU, by its UUID.

What must run alone (a benchmark, a ceilings program, a test whose verdict depends on timing or
on the GPU's free resources, a re-run alone) holds the GPU exclusively; correctness programs
share it with each other. Every grader on the machine (`grade`, each student of `batch`, a
Slurm task) goes through the same lock files, so a neighbour's benchmark never runs beside
another's measurement, and graders on different GPUs of a node never wait for each other.

The lock is flock(2) on files in a folder every user of the machine can write
(COURSE_GPU_LOCK_DIR, else /run/lock/cuda-course, else the temporary folder): the kernel
releases a dead grader's lock with its process, so a stale lock is always taken over. A
turnstile file keeps a stream of shared users from starving one that waits to be alone:
    shared: take the turnstile, take the GPU file shared, let the turnstile go
    alone:  take the turnstile, take the GPU file exclusively (the sharers drain), keep both
Each holder leaves a note (process, submission, what it runs, since when) so that a grader
that waits can say whom it waits for.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator

from grader import proc

LOCK_DIR_ENV = "COURSE_GPU_LOCK_DIR"
_SYSTEM_LOCK_DIR = Path("/run/lock")
_FOLDER = "cuda-course"
# A lock that is busy is tried again after FIRST_POLL_S, each wait twice the last, at most
# POLL_S: a pass through the turnstile takes microseconds, a benchmark seconds.
FIRST_POLL_S = 0.005
POLL_S = 0.2
# A grader that waits for another grader says so after FIRST_REPORT_S, then every
# REPORT_EVERY_S; waiting for its own programs (an exercise of its own that runs alone) it
# waits quietly.
FIRST_REPORT_S = 1.0
REPORT_EVERY_S = 10.0


def lock_dir() -> Path:
    """The machine's lock folder: shared by every user (mode 1777, like /tmp)."""
    given = os.environ.get(LOCK_DIR_ENV)
    if given:
        return Path(given)
    base = _SYSTEM_LOCK_DIR if os.access(_SYSTEM_LOCK_DIR, os.W_OK | os.X_OK) \
        else Path(tempfile.gettempdir())
    return base / _FOLDER


@dataclass
class Holder:
    """Who holds (or shares) a GPU: written beside the lock while it is held."""
    pid: int
    user: str
    submission: str
    what: str
    alone: bool
    since: float  # time.time()

    def describe(self, now: float) -> str:
        held = max(0.0, now - self.since)
        return (f"{self.what} of {self.submission} (process {self.pid}, {self.user}; "
                f"{'alone' if self.alone else 'shared'}) for {held:.0f} s")


def _user() -> str:
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return str(os.getuid())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


class GpuTurns:
    """The turns of one grader on one GPU. `shared(what)` and `alone(what)` are context
    managers that wait their turn; while waiting, `progress` hears every REPORT_EVERY_S whom
    the grader waits for. Ctrl-C while waiting raises KeyboardInterrupt with nothing held."""

    def __init__(self, uuid: str, submission: str,
                 progress: Callable[[str], None] | None = None,
                 folder: Path | None = None, clock: Callable[[], float] = time.monotonic):
        if not uuid:
            raise ValueError("GpuTurns needs the GPU's UUID")
        self.uuid = uuid
        self.submission = submission
        self.progress = progress or (lambda _message: None)
        self.folder = folder or lock_dir()
        self.clock = clock
        self._notes = self.folder / f"{uuid}.holders"
        self._count = 0
        self._count_lock = threading.Lock()
        self.waited_s = 0.0  # for other graders, in total (summed over this grade's threads)

    # -- files

    def _prepare(self) -> None:
        for path in (self.folder, self._notes):
            try:
                path.mkdir(parents=True, exist_ok=True)
                if path.stat().st_uid == os.getuid():
                    path.chmod(0o1777)  # every user's graders share it, none removes another's
            except FileExistsError:
                pass

    def _open(self, name: str) -> int:
        path = self.folder / f"{self.uuid}.{name}"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:  # made by another user without write for us: reading will do
            return os.open(path, os.O_RDONLY)
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_uid == os.getuid():
                os.fchmod(fd, 0o666)
        return fd

    def holders(self) -> list[Holder]:
        """The notes of live holders, exclusive ones first."""
        found = []
        try:
            entries = list(self._notes.iterdir())
        except OSError:
            return []
        for entry in entries:
            try:
                note = Holder(**json.loads(entry.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError):
                continue
            if _alive(note.pid):
                found.append(note)
            else:  # a dead grader's note
                with contextlib.suppress(OSError):
                    entry.unlink()
        return sorted(found, key=lambda h: (not h.alone, h.since))

    # -- taking turns

    @contextlib.contextmanager
    def shared(self, what: str) -> Iterator[None]:
        with self._turn(what, alone=False):
            yield

    @contextlib.contextmanager
    def alone(self, what: str) -> Iterator[None]:
        with self._turn(what, alone=True):
            yield

    @contextlib.contextmanager
    def _turn(self, what: str, alone: bool) -> Iterator[None]:
        self._prepare()
        gate = self._open("turnstile")
        gpu = self._open("gpu")
        note: Path | None = None
        try:
            started = self.clock()
            for_others = self._take(gate, fcntl.LOCK_EX, what, started)
            try:
                for_others |= self._take(gpu, fcntl.LOCK_EX if alone else fcntl.LOCK_SH, what,
                                         started)
            finally:
                if not alone:
                    fcntl.flock(gate, fcntl.LOCK_UN)
            if for_others:
                self.waited_s += self.clock() - started
            note = self._leave_note(what, alone)
            yield
        finally:
            if note is not None:
                with contextlib.suppress(OSError):
                    note.unlink()
            os.close(gpu)  # closing releases its locks
            os.close(gate)

    def _take(self, fd: int, how: int, what: str, started: float) -> bool:
        """Polls for the lock so that Ctrl-C and progress lines get through; True when it
        waited for another grader."""
        said_at = None
        for_others = False
        pause = FIRST_POLL_S
        while True:
            try:
                fcntl.flock(fd, how | fcntl.LOCK_NB)
                if said_at is not None:
                    self.progress(f"the GPU is free: {what} goes on after "
                                  f"{self.clock() - started:.0f} s")
                return for_others
            except OSError as error:
                if error.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
            if proc.stopping():  # Ctrl-C seen by the main thread: this thread waits no more
                raise proc.Stopped("the grading was interrupted")
            now = self.clock()
            due = now - started >= FIRST_REPORT_S if said_at is None \
                else now - said_at >= REPORT_EVERY_S
            if due:
                others = [h for h in self.holders() if h.pid != os.getpid()]
                for_others = for_others or bool(others)
                if others:
                    said_at = now
                    self.progress(self.waiting_line(what, now - started, others))
            time.sleep(pause)
            pause = min(2 * pause, POLL_S)

    def waiting_line(self, what: str, waited_s: float,
                     holders: list[Holder] | None = None) -> str:
        holders = self.holders() if holders is None else holders
        if not holders:
            whom = "another grader"
        else:
            first = holders[0]
            whom = first.describe(time.time())
            if len(holders) > 1:
                whom += f", and {len(holders) - 1} more"
        return (f"waiting for the GPU ({self.uuid[:12]}) before {what} "
                f"({waited_s:.0f} s so far): {whom}")

    def _leave_note(self, what: str, alone: bool) -> Path | None:
        with self._count_lock:
            self._count += 1
            number = self._count
        path = self._notes / f"{os.getpid()}-{threading.get_ident()}-{number}.json"
        note = Holder(os.getpid(), _user(), self.submission, what, alone, time.time())
        try:
            path.write_text(json.dumps(asdict(note)), encoding="utf-8")
        except OSError:
            return None  # the notes only inform; the lock is what counts
        return path


@contextlib.contextmanager
def maybe(turns: GpuTurns | None, what: str, alone: bool) -> Iterator[None]:
    """`turns`' shared or alone turn, or nothing where the grade takes no turns (no GPU)."""
    if turns is None:
        yield
    elif alone:
        with turns.alone(what):
            yield
    else:
        with turns.shared(what):
            yield
