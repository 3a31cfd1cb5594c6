#!/usr/bin/env bash
# Set up, then grade the student workspace (workspace/, made from the skeletons on first use,
# unless a directory is given).
# Extra arguments go to the grader: scripts/grade.sh -e ch01, scripts/grade.sh solutions --json r.json
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
exec "$PY" -m grader grade "$@"
