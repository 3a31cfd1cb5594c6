"""A private one-node Slurm cluster for tests: munged, slurmctld and slurmd from the
distribution's packages, started in a folder of their own, on loopback and free ports, the
node declared with this machine's CPUs and no GPU. `start` returns the cluster or raises
ClusterUnavailable saying why (not root, a daemon missing or not starting)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")
NODE = "course-node"
PARTITION = "course"


class ClusterUnavailable(Exception):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _find(name: str) -> str | None:
    return shutil.which(name) or next(
        (str(p) for d in ("/usr/sbin", "/sbin") if (p := Path(d) / name).is_file()), None)


@dataclass
class Cluster:
    folder: Path
    env: dict

    def run(self, *args: str, check: bool = True) -> str:
        result = subprocess.run(list(args), env=self.env, capture_output=True, text=True,
                                timeout=60)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {result.stderr.strip()}")
        return result.stdout

    def queued(self) -> list[str]:
        """Every job and array task squeue still lists, with its state: ['12_1 RUNNING']."""
        return self.run("squeue", "--noheader", "--array", "--format=%i %T").split("\n")[:-1]

    def wait_until_idle(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.queued():
            if time.monotonic() > deadline:
                raise TimeoutError(f"jobs still queued after {timeout_s} s: {self.queued()}")
            time.sleep(0.5)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:]
                         for p in sorted(self.folder.glob("*.log")))

    def stop(self) -> None:
        self.run("scancel", "--user", "root", check=False)
        pids = []
        for name in ("slurmd", "slurmctld", "munged"):
            try:
                pid = int((self.folder / f"{name}.pid").read_text().strip())
                os.kill(pid, signal.SIGTERM)
                pids.append(pid)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + 10
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if _alive(p)]
            time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def start(folder: Path, timeout_s: float = 30) -> Cluster:
    if os.geteuid() != 0:
        raise ClusterUnavailable("the test cluster's slurmd runs as root, and this is not root")
    missing = [n for n in DAEMONS + CLIENTS if _find(n) is None]
    if missing:
        raise ClusterUnavailable(f"{', '.join(missing)} not installed (Debian: apt-get install "
                                 "slurm-wlm munge; scripts/setup.sh does it with CI=true)")
    folder.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool"):
        (folder / sub).mkdir(exist_ok=True)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    socket_path = folder / "munge.sock"
    result = subprocess.run([_find("munged"), f"--socket={socket_path}", f"--key-file={key}",
                             f"--pid-file={folder / 'munged.pid'}",
                             f"--log-file={folder / 'munged.log'}",
                             f"--seed-file={folder / 'munge.seed'}", "--force"],
                            capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise ClusterUnavailable(f"munged did not start: {result.stderr.strip()}")
    conf = folder / "slurm.conf"
    conf.write_text(f"""ClusterName=course-test
SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)
SlurmUser=root
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={socket_path}
CredType=cred/munge
StateSaveLocation={folder / 'state'}
SlurmdSpoolDir={folder / 'spool'}
SlurmctldPidFile={folder / 'slurmctld.pid'}
SlurmdPidFile={folder / 'slurmd.pid'}
SlurmctldLogFile={folder / 'slurmctld.log'}
SlurmdLogFile={folder / 'slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
KillWait=30
NodeName={NODE} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN
PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
    env = dict(os.environ, SLURM_CONF=str(conf))
    # A task keeps its compiler cache on the node's scratch unless CCACHE_DIR names one;
    # the caller's own cache (a CI run's, say) is not the node's.
    env.pop("CCACHE_DIR", None)
    cluster = Cluster(folder, env)
    for command in ([_find("slurmctld"), "-i"], [_find("slurmd"), "-N", NODE]):
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            cluster.stop()
            raise ClusterUnavailable(f"{Path(command[0]).name} did not start: "
                                     f"{result.stderr.strip() or cluster.logs()[-500:]}")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = cluster.run("sinfo", "--noheader", "--format=%T", check=False).strip()
        if state == "idle":
            return cluster
        time.sleep(0.5)
    logs = cluster.logs()
    cluster.stop()
    raise ClusterUnavailable(f"the node did not become idle within {timeout_s} s "
                             f"(sinfo: {state!r}); daemon logs:\n{logs}")
