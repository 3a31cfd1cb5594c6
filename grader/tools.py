"""Locating the external tools the grader drives: meson, ninja, compute-sanitizer, nvidia-smi,
cuobjdump."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from grader.errors import GraderError
from grader.model import GpuInfo

CUDA_BIN_DIRS = [Path("/usr/local/cuda/bin"), Path("/opt/cuda/bin")]
ROOT = Path(__file__).resolve().parent.parent


def _beside_python(name: str) -> str | None:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.is_file() else None


def _wheel_bin_dirs() -> list[Path]:
    """bin folders of NVIDIA's PyPI wheels (nvidia-cuda-cuobjdump puts its binary in
    site-packages/nvidia/cu13/bin): in this Python's site-packages and in the course's .venv,
    since the grader may run under a Python other than the one setup.sh installed into."""
    sites = [Path(p) for p in sys.path if p.endswith("site-packages")]
    sites += sorted(ROOT.glob(".venv/lib/python3*/site-packages"))
    return [d for site in sites for d in sorted(site.glob("nvidia/cu*/bin"), reverse=True)]


def search_dirs() -> list[Path]:
    """Where set-up puts tools when they are not on PATH: the course's .venv (meson, ninja,
    pytest from PyPI), the CUDA toolkit, NVIDIA's wheels. Searched after PATH, so that
    `python3 -m grader` works after scripts/setup.sh without sourcing anything."""
    return [ROOT / ".venv" / "bin"] + CUDA_BIN_DIRS + _wheel_bin_dirs()


def find(name: str, required_for: str = "") -> str | None:
    path = _beside_python(name) or shutil.which(name)
    if path is None:
        for directory in search_dirs():
            if (directory / name).is_file():
                path = str(directory / name)
                break
    if path is None and required_for:
        raise GraderError(f"{name} not found on PATH; it is needed {required_for} "
                          "(run scripts/setup.sh)")
    return path


VISIBLE_ENV = "CUDA_VISIBLE_DEVICES"
_QUERY = "index,uuid,name,compute_cap,driver_version,memory.total"


def list_gpus() -> list[GpuInfo]:
    """Every GPU nvidia-smi sees, in its order (its index); [] when there is none or no
    nvidia-smi."""
    smi = find("nvidia-smi")
    if smi is None:
        return []
    try:
        result = subprocess.run([smi, f"--query-gpu={_QUERY}", "--format=csv,noheader,nounits"],
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if result.returncode != 0:
        return []
    return parse_gpu_list(result.stdout)


def parse_gpu_list(text: str) -> list[GpuInfo]:
    """nvidia-smi --query-gpu=<_QUERY> --format=csv,noheader,nounits, as GpuInfo."""
    gpus = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 6:
            continue
        try:
            index = int(fields[0])
        except ValueError:
            continue
        try:
            memory = int(float(fields[5]))
        except ValueError:
            memory = 0
        gpus.append(GpuInfo(name=fields[2], compute_capability=fields[3], driver=fields[4],
                            memory_mib=memory, uuid=fields[1], index=index))
    return gpus


def visible_gpu(gpus: list[GpuInfo], visible: str | None) -> GpuInfo | None:
    """The GPU a CUDA program sees as device 0 under CUDA_VISIBLE_DEVICES=`visible` (None: not
    set): its first entry, an index into nvidia-smi's list or a (prefix of a) UUID. None when
    that names no GPU here (CUDA then sees none either)."""
    if not gpus:
        return None
    if visible is None:
        return gpus[0]
    first = visible.split(",")[0].strip()
    if not first:
        return None
    if first.isdigit():  # a position among the GPUs this process can see (a Slurm job's
        # cgroup shows nvidia-smi only its own, whatever their numbers on the node)
        return gpus[int(first)] if int(first) < len(gpus) else None
    wanted = first if first.startswith(("GPU-", "MIG-")) else f"GPU-{first}"
    return next((g for g in gpus if g.uuid.startswith(wanted)), None)


def query_gpu() -> GpuInfo | None:
    """The GPU this process's CUDA programs use (the first that CUDA_VISIBLE_DEVICES names, or
    the first GPU), or None when there is none."""
    return visible_gpu(list_gpus(), os.environ.get(VISIBLE_ENV))
