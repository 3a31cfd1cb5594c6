"""One grader at a time in a folder: a build folder (`grade`, each student of a batch, a Slurm
task's student) or a batch's --out.

Two graders in one build folder configure and build over each other (one's report then names
the other's options); two batches in one --out grade the same students into the same build
folders and record each other's failures. The lock is flock(2), so the kernel releases it when
its process ends, however it ends: there is never a stale lock to remove.

- A build folder is locked on the folder itself, not on a file in it: `meson setup --wipe`
  (grader/stages/build.py, after a course update) empties the folder, and a lock file removed
  while held would let the next grader make a new one and take it. Nothing is added to the
  folder (Meson gives an empty folder its .gitignore). The holder's note goes to the machine's
  lock folder (grader/gpu_turns.py), named by the folder's path. On NFS a folder's lock is
  seen on its own machine only, which is where a build folder is used (its configure is the
  machine's).
- A batch's --out is locked on OUT/.grader-lock, a plain file, the note beside it: NFS
  carries a plain file's flock to the server, so a batch started from another login node
  sees it too. Nothing removes files from OUT.

`grade` waits for the grader before it (a student who started it again), saying every
REPORT_EVERY_S whom it waits for; `batch` and a Slurm submission refuse (an instructor who
started it twice), naming the holder. A file system without flock grades without the lock,
saying so.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shlex
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator

from grader import gpu_turns, proc
from grader.errors import GraderError

OUT_LOCK = ".grader-lock"
OUT_NOTE = ".grader-lock.json"
_NOTES = "folders"  # under the machine's lock folder
POLL_S = 0.2
REPORT_EVERY_S = 10.0

# Taken again by the thread that holds it (the command line may hold a build folder around
# Grader.run, which takes it too): a second flock of the same folder from this process would
# wait for itself. Another thread of this process waits like another process.
_held: dict[tuple, int] = {}
_held_lock = threading.Lock()


@dataclass
class Holder:
    """Who holds a folder: written when the lock is taken, removed when it is let go."""
    pid: int
    user: str
    host: str
    command: str
    what: str
    since: float  # time.time()

    def describe(self, now: float) -> str:
        started = time.localtime(self.since)
        at = time.strftime("%H:%M:%S" if started[:3] == time.localtime(now)[:3]
                           else "%Y-%m-%d %H:%M:%S", started)
        where = "" if self.host == socket.gethostname() else f" on {self.host}"
        return (f"process {self.pid} of {self.user}{where}, {self.what} since {at} "
                f"({_ago(now - self.since)}): {self.command}")


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s ago"
    return f"{seconds // 60} min ago" if seconds < 7200 else f"{seconds // 3600} h ago"


def command_line() -> str:
    """This process's command as its user typed it (python3 -m grader ...)."""
    argv = sys.argv or ["python3"]
    first = Path(argv[0])
    if first.name == "__main__.py" and first.parent.name == "grader":
        return shlex.join(["python3", "-m", "grader", *argv[1:]])
    return shlex.join([first.name, *argv[1:]])


class _Lock:
    """flock on `target` (a folder, or a file made on first use), the holder's note at
    `note`."""

    def __init__(self, target: Path, note: Path, is_file: bool):
        self.target, self.note, self.is_file = target, note, is_file
        self.fd: int | None = None
        self.noted = False  # this holder wrote the note

    def open(self) -> None:
        if self.is_file:
            self.fd = os.open(self.target, os.O_RDWR | os.O_CREAT, 0o666)
        else:
            self.fd = os.open(self.target, os.O_RDONLY | os.O_DIRECTORY)

    def key(self) -> tuple:
        st = os.fstat(self.fd)
        return (st.st_dev, st.st_ino, threading.get_ident())

    def take(self) -> bool:
        """True when taken; False while another holds it. OSError where the file system has
        no flock."""
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as error:
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False
            raise

    def holder(self) -> Holder | None:
        try:
            note = Holder(**json.loads(self.note.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None  # being written, or its writer could not
        return note

    def leave_note(self, what: str) -> None:
        note = Holder(os.getpid(), gpu_turns._user(), socket.gethostname(), command_line(),
                      what, time.time())
        tmp = self.note.with_name(f"{self.note.name}.{os.getpid()}.tmp")
        try:
            self.note.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(asdict(note)), encoding="utf-8")
            tmp.replace(self.note)  # a reader sees the old note or the new one, never half
            self.noted = True
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()  # the note only informs; the lock is what counts

    def close(self) -> None:
        if self.fd is None:
            return
        if self.noted:  # ours to remove: nobody else can take the lock before the close below
            with contextlib.suppress(OSError):
                self.note.unlink()
            self.noted = False
        os.close(self.fd)  # closing lets the lock go
        self.fd = None


def _note_for(folder: Path) -> Path:
    """A build folder's note in the machine's lock folder, named by the folder's path."""
    digest = hashlib.sha256(os.fsencode(folder.resolve())).hexdigest()[:24]
    base = gpu_turns.lock_dir()
    for path in (base, base / _NOTES):
        with contextlib.suppress(OSError):
            path.mkdir(parents=True, exist_ok=True)
            if path.stat().st_uid == os.getuid():
                path.chmod(0o1777)  # every user's graders leave notes here
    return base / _NOTES / f"{digest}.json"


def _open(lock: _Lock) -> None:
    try:
        lock.open()
    except OSError as error:
        raise GraderError(f"cannot open {lock.target} to lock it "
                          f"({error.strerror or error})") from None


@contextlib.contextmanager
def _held_by(lock: _Lock, wait: Callable[[], None], no_flock: Callable[[OSError], None],
             what: str) -> Iterator[None]:
    """Takes the opened `lock` (or finds this thread holds it already), calling wait() while
    another holder has it; lets it go at the end."""
    key = lock.key()
    with _held_lock:
        again = key in _held
        if again:
            _held[key] += 1
    if again:
        os.close(lock.fd)  # this thread's first hold keeps the lock and its note
        lock.fd = None
        try:
            yield
        finally:
            with _held_lock:
                _held[key] -= 1
        return
    try:
        while True:
            try:
                taken = lock.take()
            except OSError as error:  # no flock on this file system: go on without, saying so
                no_flock(error)
                break
            if taken:
                lock.leave_note(what)
                break
            wait()
        with _held_lock:
            _held[key] = 1
        yield
    finally:
        with _held_lock:
            _held.pop(key, None)
        lock.close()


@contextlib.contextmanager
def build_folder(folder: Path, submission: str,
                 progress: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """The build folder (which must exist) for this grader alone: waits while another grader
    has it, telling `progress` whom it waits for, first at once and then every
    REPORT_EVERY_S. Ctrl-C while waiting: KeyboardInterrupt (proc.Stopped in a batch's worker
    thread) with nothing held."""
    say = progress or (lambda _message: None)
    lock = _Lock(folder, _note_for(folder), is_file=False)
    started, said_at = clock(), None

    def wait() -> None:
        nonlocal said_at
        if proc.stopping():  # Ctrl-C seen by a batch's main thread
            raise proc.Stopped("the grading was interrupted")
        now = clock()
        if said_at is None or now - said_at >= REPORT_EVERY_S:
            said_at = now
            say(f"waiting for the build folder {folder} ({now - started:.0f} s so far): "
                f"{_whom(lock)}; this grade starts when it ends")
        time.sleep(POLL_S)

    def no_flock(error: OSError) -> None:
        say(f"cannot lock the build folder {folder} ({error.strerror}): another grader "
            "working there at the same time would not be noticed")

    _open(lock)
    with _held_by(lock, wait, no_flock, f"grading {submission}"):
        if said_at is not None:
            say(f"the build folder is free: grading goes on after {clock() - started:.0f} s")
        yield


@contextlib.contextmanager
def out_folder(out: Path, what: str,
               say: Callable[[str], None] | None = None) -> Iterator[None]:
    """OUT (which must exist) for this batch alone; GraderError, one line naming the holder,
    when another batch or Slurm submission has it."""
    lock = _Lock(out / OUT_LOCK, out / OUT_NOTE, is_file=True)

    def refuse() -> None:
        holder = lock.holder()
        stop = f" (kill {holder.pid})" if holder and holder.host == socket.gethostname() \
            else ""
        raise GraderError(f"--out {out} is in use by {_whom(lock)}; one batch per --out at a "
                          f"time: wait for it to end, or stop it{stop} and run this command "
                          "again, which resumes")

    def no_flock(error: OSError) -> None:
        (say or (lambda _message: None))(
            f"cannot lock {out} ({error.strerror}): a second batch into it at the same time "
            "would not be noticed")

    _open(lock)
    with _held_by(lock, refuse, no_flock, what):
        yield


def _whom(lock: _Lock) -> str:
    holder = lock.holder()
    return holder.describe(time.time()) if holder else "another grader (it left no note)"
