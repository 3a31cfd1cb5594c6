#!/usr/bin/env bash
# Set up, then run every test of the course:
#  1. the grader's and the course's Python tests (GPU-only ones skip without a GPU);
#  2. compile every solution and every skeleton through the grader (--build-only);
#  3. meson test on the solutions build: the support library's host tests run for real,
#     exercise tests run on a GPU and are reported as skipped without one.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
mkdir -p build/ci
status=0

echo "== 1/3 python tests"
"$PY" -m pytest tests -q -p no:cacheprovider --timeout=1800 || status=1

echo "== 2/3 compile every solution and skeleton"
for tree in solutions skeletons; do
  "$PY" -m grader grade "$tree" --build-only -q --build-dir "build/ci/$tree" \
      --json "build/ci/$tree.json" > "build/ci/$tree.txt" || status=1
  # The solutions must also meet every technique rule (checked on the compiled code).
  checks=(--all-compiled)
  [ "$tree" = solutions ] && checks+=(--techniques)
  "$PY" scripts/check_report.py "build/ci/$tree.json" "${checks[@]}" || {
    status=1; cat "build/ci/$tree.txt"; }
done

echo "== 3/3 meson test (solutions build)"
"$PY" -m mesonbuild.mesonmain test -C build/ci/solutions --print-errorlogs || status=1

if [ $status = 0 ]; then echo "test.sh: all passed"; else echo "test.sh: FAILED" >&2; fi
exit $status
