"""Locating the external tools the grader drives: meson, ninja, compute-sanitizer, nvidia-smi,
cuobjdump."""

from __future__ import annotations

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


def query_gpu() -> GpuInfo | None:
    """The first GPU as nvidia-smi sees it, or None when there is none."""
    smi = find("nvidia-smi")
    if smi is None:
        return None
    try:
        result = subprocess.run(
            [smi, "--query-gpu=name,compute_cap,driver_version,memory.total",
             "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0 or not result.stdout.strip():
        return None
    fields = [f.strip() for f in result.stdout.strip().splitlines()[0].split(",")]
    if len(fields) < 4:
        return None
    try:
        memory = int(float(fields[3]))
    except ValueError:
        memory = 0
    return GpuInfo(name=fields[0], compute_capability=fields[1], driver=fields[2],
                   memory_mib=memory)
