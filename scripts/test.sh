#!/usr/bin/env bash
# Set up, then run every test of the course:
#  1. compile every solution and every skeleton through the grader (--build-only), and check
#     on the compiled tests that each sanitizer filter still covers every small test; first,
#     because it fills the compiler cache with the course's objects in one build that keeps
#     every core busy, which the Python tests' own builds then take from it;
#  2. meson test on the solutions build: the support library's host tests run for real,
#     exercise tests run on a GPU and are reported as skipped without one;
#  3. the grader's and the course's Python tests (GPU-only ones skip without a GPU; the 15
#     slowest are listed, to see where CI's time goes; for their CPU time, pass
#     PYTEST_ADDOPTS="--cpu-costs FILE" and read it with scripts/test_costs.py), in parallel
#     where pytest-xdist is there.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
mkdir -p build/ci
status=0

# A student template (python3 -m grader export-template) has no solutions/: only the
# skeletons are compiled there, and their build runs the support library's tests.
trees="solutions skeletons"
[ -f .course-template ] && trees="skeletons"
echo "== 1/3 compile every solution and skeleton"
for tree in $trees; do
  "$PY" -m grader grade "$tree" --build-only -q --build-dir "build/ci/$tree" \
      --json "build/ci/$tree.json" > "build/ci/$tree.txt" || status=1
  # The solutions must also meet every technique rule (checked on the compiled code).
  checks=(--all-compiled)
  [ "$tree" = solutions ] && checks+=(--techniques)
  "$PY" scripts/check_report.py "build/ci/$tree.json" "${checks[@]}" || {
    status=1; cat "build/ci/$tree.txt"; }
done

first_tree=${trees%% *}
# Every small test still runs under the sanitizer, however its filter was trimmed.
"$PY" scripts/check_sanitizer_coverage.py "build/ci/$first_tree" || status=1

echo "== 2/3 meson test ($first_tree build)"
"$PY" -m mesonbuild.mesonmain test -C "build/ci/$first_tree" --print-errorlogs || status=1

echo "== 3/3 python tests"
# With pytest-xdist (requirements.txt), COURSE_TEST_WORKERS processes (default 4: most tests
# wait on programs they start, so more than the cores pay), each taking whole modules, so that
# a module's compiled fixtures are built once.
parallel=()
if "$PY" -c 'import xdist' 2>/dev/null && [ "${COURSE_TEST_WORKERS:-4}" -gt 1 ]; then
  parallel=(-n "${COURSE_TEST_WORKERS:-4}" --dist loadfile)
fi
"$PY" -m pytest tests -q -p no:cacheprovider --timeout=1800 --durations=15 "${parallel[@]}" \
  || status=1

if [ $status = 0 ]; then echo "test.sh: all passed"; else echo "test.sh: FAILED" >&2; fi
exit $status
