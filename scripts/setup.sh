#!/usr/bin/env bash
# Set-up for a fresh machine; safe to run again. Source it (". scripts/setup.sh") to get
# $PY (the Python that has the course's tools) and a PATH with nvcc, meson and ninja.
#
# Needs: Python >= 3.11, the CUDA toolkit (nvcc), GoogleTest, Meson >= 1.4.1, Ninja, pytest.
# What is missing comes from apt (GoogleTest, pkg-config, ccache; as root only) and PyPI
# (into .venv). A machine that already has everything, such as an offline GPU machine with
# meson and pytest installed, is used as it is.
# Sourced, it leaves the caller's shell options as they were (set -e would otherwise leak into
# a script that means to carry on after a failing step, as gpu_check.sh does).
_course_caller_options=$(set +o)
set -euo pipefail
_course_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

_fail() { echo "setup: error: $*" >&2; return 1 2>/dev/null || exit 1; }

_has_python_tools() {  # $1: python; true when it has meson >= 1.4.1, pytest and pytest-timeout
  "$1" - <<'PYEOF' 2>/dev/null
import sys
from importlib.metadata import version
import pytest, pytest_timeout, mesonbuild  # noqa: F401
parts = tuple(int(p) for p in version("meson").split(".")[:3])
sys.exit(0 if sys.version_info >= (3, 11) and parts >= (1, 4, 1) else 1)
PYEOF
}

for cuda_bin in /usr/local/cuda/bin /opt/cuda/bin; do
  if [ -x "$cuda_bin/nvcc" ] && ! command -v nvcc >/dev/null 2>&1; then
    export PATH="$cuda_bin:$PATH"
  fi
done
command -v nvcc >/dev/null 2>&1 || _fail "nvcc not found: install the CUDA toolkit (12.0 or newer)"

_apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing $* with apt-get" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } \
      >/dev/null 2>&1 || echo "setup: apt-get install $* failed" >&2
  fi
}
if ! pkg-config --exists gtest 2>/dev/null && [ ! -f /usr/src/googletest/googletest/src/gtest-all.cc ]; then
  _apt_install libgtest-dev pkg-config
  pkg-config --exists gtest 2>/dev/null || [ -f /usr/src/googletest/googletest/src/gtest-all.cc ] \
    || _fail "GoogleTest not found: install libgtest-dev (Debian/Ubuntu)"
fi
if ! command -v ccache >/dev/null 2>&1 && [ "${COURSE_NO_CCACHE:-0}" != 1 ]; then
  _apt_install ccache  # optional: lets the skeletons and solutions builds share objects
fi

PY=""
for candidate in "$_course_root/.venv/bin/python" python3 python3.12 python3.11; do
  if command -v "$candidate" >/dev/null 2>&1 && _has_python_tools "$candidate"; then
    PY=$(command -v "$candidate")
    break
  fi
done
if [ -z "$PY" ]; then
  base=""
  for candidate in python3 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1 && \
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      base=$(command -v "$candidate"); break
    fi
  done
  [ -n "$base" ] || _fail "Python 3.11 or newer not found"
  echo "setup: creating .venv with meson, ninja and pytest from PyPI" >&2
  "$base" -m venv "$_course_root/.venv" || _fail "python -m venv failed (apt-get install python3-venv?)"
  "$_course_root/.venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  "$_course_root/.venv/bin/python" -m pip install -q -r "$_course_root/requirements.txt" \
    || _fail "pip install -r requirements.txt failed"
  PY="$_course_root/.venv/bin/python"
fi
# The technique stage reads compiled code with cuobjdump (and cuobjdump -sass needs nvdisasm);
# a toolkit without them (this course's CPU machines) gets NVIDIA's PyPI wheels in .venv, where
# grader/tools.py finds them (site-packages/nvidia/cu*/bin).
if ! "$PY" -c 'import sys; sys.path.insert(0, "'"$_course_root"'"); from grader import tools
sys.exit(0 if tools.find("cuobjdump") and tools.find("nvdisasm") else 1)' 2>/dev/null; then
  cuda_major=$(nvcc --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  echo "setup: installing cuobjdump and nvdisasm ${cuda_major}.x from PyPI into .venv" >&2
  [ -x "$_course_root/.venv/bin/python" ] || "$PY" -m venv "$_course_root/.venv" \
    || _fail "python -m venv failed (apt-get install python3-venv?)"
  "$_course_root/.venv/bin/python" -m pip install -q \
      "nvidia-cuda-cuobjdump>=${cuda_major},<$((cuda_major + 1))" \
      "nvidia-cuda-nvdisasm>=${cuda_major},<$((cuda_major + 1))" \
    || _fail "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm failed"
fi
# The HTML report's libraries: into .venv when it is ours; a Python of the machine's own (an
# offline GPU machine) is left as it is, and --html then warns and is skipped.
if [ "$PY" = "$_course_root/.venv/bin/python" ] && ! "$PY" -c 'import jinja2, matplotlib' 2>/dev/null; then
  echo "setup: installing jinja2 and matplotlib (the HTML report) from PyPI into .venv" >&2
  "$PY" -m pip install -q $(grep -E '^(jinja2|matplotlib)==' "$_course_root/requirements.txt") \
    || echo "setup: warning: pip install jinja2 matplotlib failed; grade --html will be skipped" >&2
fi
# pytest-xdist runs the tests in parallel (scripts/test.sh): into .venv when it is ours and lacks
# it (one made before it was listed); elsewhere the tests run in one process.
if [ "$PY" = "$_course_root/.venv/bin/python" ] && ! "$PY" -c 'import xdist' 2>/dev/null; then
  echo "setup: installing pytest-xdist from PyPI into .venv" >&2
  "$PY" -m pip install -q $(grep -E '^pytest-xdist==' "$_course_root/requirements.txt") \
    || echo "setup: warning: pip install pytest-xdist failed; the tests run in one process" >&2
fi
# The grading service's web framework and server (python3 -m grader serve): into .venv when it is
# ours and lacks them; elsewhere only `serve` is unavailable, saying what to install.
if [ "$PY" = "$_course_root/.venv/bin/python" ] && ! "$PY" -c 'import flask, waitress' 2>/dev/null; then
  echo "setup: installing flask and waitress (the grading service) from PyPI into .venv" >&2
  "$PY" -m pip install -q $(grep -E '^(flask|werkzeug|waitress)==' "$_course_root/requirements.txt") \
    || echo "setup: warning: pip install flask waitress failed; 'grader serve' is unavailable" >&2
fi
# Chromium renders the HTML report in CI's browser test (tests/test_html_report.py); students
# and GPU machines do not need it: only with CI=true or COURSE_BROWSER=1.
if { [ "${CI:-}" = true ] || [ "${COURSE_BROWSER:-0}" = 1 ]; } && ! command -v chromium >/dev/null 2>&1; then
  _apt_install chromium
fi
# Slurm and munge: CI starts a one-node cluster from them for the job-array test
# (tests/test_slurm_cluster.py); only with CI=true or COURSE_SLURM=1.
if { [ "${CI:-}" = true ] || [ "${COURSE_SLURM:-0}" = 1 ]; } && ! command -v sbatch >/dev/null 2>&1; then
  _apt_install slurm-wlm munge
fi
export PY
export PATH="$(dirname "$PY"):$PATH"
command -v ninja >/dev/null 2>&1 || _fail "ninja not found"
echo "setup: ready (python: $PY; meson $("$PY" -m mesonbuild.mesonmain --version); nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))" >&2
eval "$_course_caller_options"
