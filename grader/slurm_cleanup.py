"""Removing a Slurm task's build folder on its node (`grader slurm-cleanup`, the task
script's EXIT trap): every process still working in the folder, found through Linux's /proc,
is stopped and killed first, since one that a signal orphaned would write the folder back."""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from pathlib import Path

from grader.errors import GraderError

# The name of a task's build folder on its node's scratch, as task_script makes it.
TASK_FOLDER = r"cuda-course-\d+-\d+"


def processes_working_in(folder: Path) -> list[int]:
    """The processes (Linux's /proc) whose current directory is in `folder` or that name it in
    an argument, this one and its parent left out: the programs of a task's build."""
    inside = str(folder).rstrip("/")
    spared = {os.getpid(), os.getppid()}

    def names_it(text: str) -> bool:
        return text == inside or text.endswith(inside) or inside + "/" in text

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        try:
            cwd = os.readlink(entry / "cwd").removesuffix(" (deleted)")
            args = (entry / "cmdline").read_bytes().decode("utf-8", "replace").split("\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if cwd == inside or cwd.startswith(inside + "/") or any(map(names_it, args)):
            found.append(int(entry.name))
    return found


def end_processes_working_in(folder: Path) -> None:
    """Stops every process working in `folder` until a look finds none new (a stopped
    process forks no more), then kills them all."""
    stopped: set[int] = set()
    while True:
        new = [pid for pid in processes_working_in(folder) if pid not in stopped]
        if not new:
            break
        for pid in new:
            stopped.add(pid)
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def remove_scratch(folder: Path, attempts: int = 5, pause_s: float = 0.5) -> bool:
    """Removes a task's build folder, first ending every process still working in it: one
    that a signal orphaned (it has its own session, so the task's end does not reach it) would
    write the folder back. True once it is gone with nothing left working in it. Only a
    folder named as task_script names them is touched: "/" would end every process."""
    if not folder.is_absolute() or not re.fullmatch(TASK_FOLDER, folder.name):
        raise GraderError(f"{folder} is not a task's build folder (an absolute path ending in "
                          "cuda-course-<job>-<task>); nothing removed")
    for attempt in range(attempts):
        end_processes_working_in(folder)
        shutil.rmtree(folder, ignore_errors=True)
        if not os.path.lexists(folder) and not processes_working_in(folder):
            return True
        if attempt + 1 < attempts:
            time.sleep(pause_s)
    return False

