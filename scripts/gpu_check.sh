#!/usr/bin/env bash
# The whole GPU check in one call, for the lent GPU machine or any machine with a GPU:
# grade solutions/ (RUNS times, sanitizer included), grade skeletons/, grade every fixture
# under tests/fixtures/submissions, run the course's own tests, then print a short table.
# Logs and reports go to $OUT (default build/gpu-check); the table is printed last.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-check}
RUNS=${RUNS:-3}
FIXTURES=${FIXTURES:-all}
mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi
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
echo "== skeletons"
$PY -m grader grade skeletons "${ONLY[@]}" -q --seed "$SEED" \
    --json "$OUT/logs/skeletons.json" > "$OUT/logs/skeletons.txt" 2>&1 || status=1
tail -n 2 "$OUT/logs/skeletons.txt"
if [ "$FIXTURES" != none ]; then
  for dir in tests/fixtures/submissions/*/; do
    name=$(basename "$dir")
    echo "== fixture $name"
    $PY -m grader grade "$dir" "${ONLY[@]}" -q --seed "$SEED" --json "$OUT/logs/fixture-$name.json" \
        > "$OUT/logs/fixture-$name.txt" 2>&1 || status=1
    tail -n 2 "$OUT/logs/fixture-$name.txt"
  done
fi
if [ "${PYTEST:-1}" = 1 ]; then
  echo "== course tests (pytest, GPU tests included)"
  $PY -m pytest tests -q -x --timeout=1800 -p no:cacheprovider > "$OUT/logs/pytest.txt" 2>&1 \
    || { status=1; tail -n 30 "$OUT/logs/pytest.txt"; }
  tail -n 1 "$OUT/logs/pytest.txt"
fi
tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
$PY scripts/summarize.py "$OUT"/logs/*.json | tee "$OUT/summary.txt"
exit $status
