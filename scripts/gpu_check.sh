#!/usr/bin/env bash
# The whole GPU check in one call, for the lent GPU machine or any machine with a GPU:
# grade solutions/ (RUNS times, sanitizer included), grade skeletons/, grade every fixture
# under tests/fixtures/submissions, run the course's own tests, then print a short table.
# Logs and reports go to $OUT (default build/gpu-check); the table is printed last.
# Knobs: RUNS (solutions runs, default 3), EXERCISES ("ch01 ch02", default all), SKELETONS=0,
# PYTEST=0, FIXTURES (comma-separated fixture names for the pytest stage, default all), SEED.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-check}
RUNS=${RUNS:-3}
FIXTURES=${FIXTURES:-all}
mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1
. scripts/setup.sh
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.mem --format=csv \
  > "$OUT/logs/gpu.txt" 2>&1
cat "$OUT/logs/gpu.txt"
status=0
SEED=${SEED:-$($PY -c 'import secrets; print(secrets.randbits(32))')}
ONLY=()
for e in ${EXERCISES:-}; do ONLY+=(-e "$e"); done

for i in $(seq 1 "$RUNS"); do
  echo "== solutions, run $i (seed $((SEED + i)))"
  $PY -m grader grade solutions "${ONLY[@]}" -q --seed $((SEED + i)) \
      --json "$OUT/logs/solutions-$i.json" > "$OUT/logs/solutions-$i.txt" 2>&1 || status=1
  tail -n 3 "$OUT/logs/solutions-$i.txt"
done
# The benchmark harness itself on the GPU (state reset between measurements, errors).
harness=$(ls -d build/grade/solutions-*/support_gpu_tests 2>/dev/null | head -n 1)
if [ -n "$harness" ]; then
  echo "== support library GPU tests"
  "$harness" > "$OUT/logs/support-gpu.txt" 2>&1 || { status=1; cat "$OUT/logs/support-gpu.txt"; }
  tail -n 1 "$OUT/logs/support-gpu.txt"
fi
if [ "${SKELETONS:-1}" = 1 ]; then
  echo "== skeletons"
  $PY -m grader grade skeletons "${ONLY[@]}" -q --seed "$SEED" \
      --json "$OUT/logs/skeletons.json" > "$OUT/logs/skeletons.txt" 2>&1 || status=1
  tail -n 2 "$OUT/logs/skeletons.txt"
fi
if [ "${PYTEST:-1}" = 1 ]; then
  # The course's tests, GPU ones included: every fixture under tests/fixtures/submissions is
  # graded and checked against its expect.toml; the reports land beside the others.
  echo "== course tests (pytest; fixtures graded on the GPU)"
  COURSE_FIXTURE_REPORTS="$OUT/logs" COURSE_FIXTURES="$FIXTURES" \
    $PY -m pytest tests -q --timeout=1800 -p no:cacheprovider -rfEs > "$OUT/logs/pytest.txt" 2>&1 \
    || { status=1; grep -E "^(FAILED|ERROR)" "$OUT/logs/pytest.txt" | head -n 30; }
  tail -n 1 "$OUT/logs/pytest.txt"
fi
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
$PY scripts/summarize.py "$OUT"/logs/*.json | tee "$OUT/summary.txt"
exit $status
