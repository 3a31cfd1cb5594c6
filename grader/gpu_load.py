"""Foreign load on the GPU: which other processes use it, and whether they were busy.

Graders on one machine take turns (grader/gpu_turns.py), so while a grader holds its GPU alone
any other compute process on that GPU is foreign: a student's own program, a notebook, a job
outside the course. A LoadWatch looks before and after a measurement; a measurement during
which a foreign process computed is disturbed, and the grader takes it again or reports it as
not measured (grader/stages/measured.py), never as a low score.

Two probes read the GPU, both from the driver's NVML: the NVML library itself through ctypes
(fast, and it keeps each process's SM activity, so a foreign process that only holds a context
is told from one that computes), else nvidia-smi (every process listed counts as busy).
"""

from __future__ import annotations

import ctypes
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from grader import tools

# Right after one of the grader's own programs ends, the device's utilisation still counts it
# for a sample period (it read 0 again 0.3-0.4 s after a kernel on an H100): a busy reading
# with no process in sight is only believed when it holds this long, looked at this often.
SETTLE_S = 1.2
SETTLE_POLL_S = 0.05
# A look this long into a measurement: once the measured program is seen there, this machine
# shows the GPU's processes, and a busy reading with none in sight is the grader's own.
PEEK_AFTER_S = 0.3
# How long a process that exited may still be listed: looks this far apart, this many.
LINGER_PAUSE_S = 0.25
LINGER_LOOKS = 6


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    name: str

    def describe(self) -> str:
        return f"process {self.pid} ({self.name or 'name unknown'})"


@dataclass
class Look:
    """The GPU at one moment: its compute processes and its utilisation (percent of the last
    sample period with a kernel running; None when unknown)."""
    processes: list[GpuProcess] = field(default_factory=list)
    utilization: int | None = None
    error: str = ""


class Probe(Protocol):
    def look(self) -> Look: ...

    def active(self, pids: set[int], since_s: float) -> set[int] | None:
        """Those of `pids` that ran kernels since `since_s` (time.time()); None: cannot tell."""


# ------------------------------------------------------------------------------ NVML

class _ProcessInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _ProcessSample(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("timeStamp", ctypes.c_ulonglong),
                ("smUtil", ctypes.c_uint), ("memUtil", ctypes.c_uint),
                ("encUtil", ctypes.c_uint), ("decUtil", ctypes.c_uint)]


_NVML_SUCCESS, _NVML_INSUFFICIENT_SIZE, _NVML_NOT_FOUND = 0, 7, 6


class NvmlProbe:
    """NVML through ctypes. Raises OSError from the constructor where the library, the GPU or
    a call it needs is missing."""

    def __init__(self, uuid: str):
        try:
            self._lib = ctypes.CDLL("libnvidia-ml.so.1")
        except OSError as error:
            raise OSError(f"no NVML library ({error})") from None
        self._check(self._lib.nvmlInit_v2(), "nvmlInit_v2")
        self._device = ctypes.c_void_p()
        self._check(self._lib.nvmlDeviceGetHandleByUUID(uuid.encode(),
                                                        ctypes.byref(self._device)),
                    "nvmlDeviceGetHandleByUUID")
        self._running = getattr(self._lib, "nvmlDeviceGetComputeRunningProcesses_v3", None) \
            or getattr(self._lib, "nvmlDeviceGetComputeRunningProcesses_v2", None)
        if self._running is None:
            raise OSError("NVML has no nvmlDeviceGetComputeRunningProcesses_v2/_v3")
        self.look()  # every call works, or the constructor says which does not

    @staticmethod
    def _check(status: int, call: str) -> None:
        if status != _NVML_SUCCESS:
            raise OSError(f"{call} returned NVML error {status}")

    def _name(self, pid: int) -> str:
        buffer = ctypes.create_string_buffer(256)
        if self._lib.nvmlSystemGetProcessName(ctypes.c_uint(pid), buffer, 256) != _NVML_SUCCESS:
            return ""
        return buffer.value.decode("utf-8", "replace").rsplit("/", 1)[-1]

    def look(self) -> Look:
        count = ctypes.c_uint(64)
        infos = (_ProcessInfo * 64)()
        status = self._running(self._device, ctypes.byref(count), infos)
        if status == _NVML_INSUFFICIENT_SIZE:  # more than 64 processes: size from the count
            infos = (_ProcessInfo * count.value)()
            status = self._running(self._device, ctypes.byref(count), infos)
        self._check(status, "nvmlDeviceGetComputeRunningProcesses")
        processes = [GpuProcess(int(infos[i].pid), self._name(int(infos[i].pid)))
                     for i in range(count.value)]
        rates = _Utilization()
        self._check(self._lib.nvmlDeviceGetUtilizationRates(self._device, ctypes.byref(rates)),
                    "nvmlDeviceGetUtilizationRates")
        return Look(processes, int(rates.gpu))

    def active(self, pids: set[int], since_s: float) -> set[int] | None:
        count = ctypes.c_uint(0)
        since_us = ctypes.c_ulonglong(int(since_s * 1e6))
        status = self._lib.nvmlDeviceGetProcessUtilization(self._device, None,
                                                           ctypes.byref(count), since_us)
        if status == _NVML_NOT_FOUND:
            return set()  # no process ran kernels since then
        if status not in (_NVML_SUCCESS, _NVML_INSUFFICIENT_SIZE) or count.value == 0:
            return None if status != _NVML_SUCCESS else set()
        samples = (_ProcessSample * count.value)()
        status = self._lib.nvmlDeviceGetProcessUtilization(self._device, samples,
                                                           ctypes.byref(count), since_us)
        if status == _NVML_NOT_FOUND:
            return set()
        if status != _NVML_SUCCESS:
            return None
        return {int(s.pid) for s in samples[:count.value]
                if int(s.pid) in pids and s.smUtil > 0}


# ------------------------------------------------------------------------------ nvidia-smi

class SmiProbe:
    """nvidia-smi: the compute processes and the utilisation; it cannot tell an idle process
    from a busy one, so every foreign process counts as busy."""

    def __init__(self, uuid: str, run: Callable[[list[str]], str] | None = None):
        self.uuid = uuid
        self._run = run or _run_smi

    def look(self) -> Look:
        try:
            apps = self._run(["--query-compute-apps=pid,process_name", "--format=csv,noheader",
                              f"--id={self.uuid}"])
            busy = self._run(["--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                              f"--id={self.uuid}"])
        except OSError as error:
            return Look(error=str(error))
        return Look(parse_compute_apps(apps), _first_int(busy))

    def active(self, pids: set[int], since_s: float) -> set[int] | None:
        return None


def _run_smi(arguments: list[str]) -> str:
    smi = tools.find("nvidia-smi")
    if smi is None:
        raise OSError("nvidia-smi not found")
    try:
        result = subprocess.run([smi, *arguments], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise OSError("nvidia-smi did not answer within 30 s") from None
    if result.returncode != 0:
        raise OSError(f"nvidia-smi {arguments[0]} failed: "
                      f"{(result.stdout + result.stderr).strip()[:200]}")
    return result.stdout


def parse_compute_apps(text: str) -> list[GpuProcess]:
    """nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader."""
    found = []
    for line in text.splitlines():
        pid, _, name = line.partition(",")
        if pid.strip().isdigit():
            found.append(GpuProcess(int(pid), name.strip().rsplit("/", 1)[-1]))
    return found


def _first_int(text: str) -> int | None:
    for token in text.split():
        if token.isdigit():
            return int(token)
    return None


def probe_for(uuid: str) -> Probe | None:
    """The best probe this machine has for the GPU, or None when neither works."""
    try:
        return NvmlProbe(uuid)
    except OSError:
        pass
    smi = SmiProbe(uuid)
    return smi if not smi.look().error else None


# ------------------------------------------------------------------------------ the watch

@dataclass
class Disturbance:
    """Why a measurement does not count: who used the GPU beside it."""
    processes: list[GpuProcess]
    utilization: int | None = None

    def describe(self) -> str:
        if self.processes:
            shown = ", ".join(p.describe() for p in self.processes[:3])
            more = f" and {len(self.processes) - 3} more" if len(self.processes) > 3 else ""
            return f"the GPU was busy with {shown}{more}"
        return (f"the GPU was {self.utilization}% busy with work of a process this grader "
                "cannot see (another container or user)")


class LoadWatch:
    """Looks at the GPU before and after a measurement the grader runs alone on it."""

    def __init__(self, probe: Probe, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time):
        self.probe = probe
        self.sleep = sleep
        self.clock = clock
        self._before: Look | None = None
        self._started = 0.0
        self._peek: threading.Timer | None = None
        # Whether this machine lists the GPU's processes to the grader (a container may not):
        # learned by looking during a measurement.
        self.sees_processes = False

    def busy_now(self) -> Disturbance | None:
        """Whether something else uses the GPU now (nothing of this grader runs)."""
        look = self.probe.look()
        if look.error:
            return None
        if look.processes:
            active = self.probe.active({p.pid for p in look.processes},
                                       self.clock() - SETTLE_S)
            busy = look.processes if active is None else \
                [p for p in look.processes if p.pid in active]
            return Disturbance(busy) if busy else None
        if look.utilization and not self.sees_processes:
            # No process in sight: the grader's own last program fading from the sample, or
            # a process this grader cannot see, if it holds.
            waited = 0.0
            while waited < SETTLE_S:
                self.sleep(SETTLE_POLL_S)
                waited += SETTLE_POLL_S
                again = self.probe.look()
                if again.error or not again.utilization:
                    return None
                if again.processes:
                    return self.busy_now()
            return Disturbance([], again.utilization)
        return None

    def start(self) -> None:
        """Right before the measurement."""
        self._before = self.probe.look()
        self._started = self.clock()
        if not self.sees_processes:
            self._peek = threading.Timer(PEEK_AFTER_S, self._look_during)
            self._peek.daemon = True
            self._peek.start()

    def _look_during(self) -> None:
        look = self.probe.look()
        if look.processes and not look.error:
            self.sees_processes = True

    def disturbance(self) -> Disturbance | None:
        """Right after it (its program has ended): the foreign processes that computed
        meanwhile, or None. Processes seen before or after are foreign: none of this
        grader's programs ran at those moments."""
        if self._peek is not None:
            self._peek.cancel()
            self._peek = None
        after = self.probe.look()
        before = self._before or Look()
        if after.error and before.error:
            return None
        # The measured program has exited, but the driver may list it a moment longer (under
        # a PID namespace its number is not the one the grader knows): a process new since
        # the look before counts only if it is still there a little later.
        known = {p.pid for p in before.processes}
        for _ in range(LINGER_LOOKS):
            if not {p.pid for p in after.processes} - known:
                break
            self.sleep(LINGER_PAUSE_S)
            after = self.probe.look()
        seen = {p.pid: p for p in before.processes + after.processes}
        if not seen:
            return None
        active = self.probe.active(set(seen), self._started)
        busy = list(seen.values()) if active is None else [seen[p] for p in sorted(active)]
        return Disturbance(busy) if busy else None
