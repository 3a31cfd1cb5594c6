#!/usr/bin/env bash
# The whole GPU check in one call, for the lent GPU machine or any machine with a GPU.
# Stages, each run for real or failed loudly, never skipped without saying so:
#   solutions   grade solutions/ RUNS times (sanitizer included); every exercise must earn
#               full marks, or the stage fails naming what lost points
#   support     build and run the support library's GPU tests (exit 77, "no GPU", fails)
#   skeletons   grade skeletons/; every exercise must compile and earn 0 correctness points
#   student     what one more student costs with the course already built: a copy of solutions/
#               and one of skeletons/, every student file changed by a comment (so that it
#               compiles again), each graded into the build directory its stage above used;
#               the wall time and the report's phases are the detail (needs both stages on)
#   incremental scripts/incremental_times.py: every exercise of INCREMENTAL_CHAPTERS (default
#               all) changed by a comment in a copy of solutions/ and graded alone into the
#               solutions' build directory, as a student re-grading one exercise; each must keep
#               full marks within INCREMENTAL_LIMIT_S seconds (default 12), wall time included,
#               the median within INCREMENTAL_MEDIAN_S (default 8)
#   batch       scripts/check_batch.py: a class of five (solutions, skeletons, two fixtures, a
#               one-file student) through `grader batch` on BATCH_EXERCISES (default ch01), stopped
#               with SIGTERM after the first report and resumed; gradebook totals must equal
#               the reports', nobody graded twice
#   profile     grade --profile of solutions/ (PROFILE_EXERCISES, default all) and of three
#               fixtures slow for a taught reason (PROFILE_FIXTURES; "" for none): every profile stage
#               passes with full marks kept, and each fixture's explaining counter
#               (scripts/check_profile.py) comes out worse than the reference's
#   calibrate   grader calibrate from the solutions' reports of this run into
#               $OUT/calibrations, then again with vector_add/bandwidth made unreachable
#               (--full-at 100), which must come out flagged
#   shared      scripts/check_shared_gpu.py concurrent: one grader of solutions/ alone, then
#               SHARED_GRADERS (default 3) started at once on the GPU, SHARED_ROUNDS times
#               (default 1) on SHARED_EXERCISES (default EXERCISES): each must earn full marks
#               with no accusation inferred from timing; the wall times are the detail
#               (SHARED_ALONE=0: without the grader alone)
#   neighbour   scripts/check_shared_gpu.py neighbour: a grade of NEIGHBOUR_EXERCISES (default
#               ch01) while scripts/gpu_hog.cu keeps the GPU busy: exit 3, every benchmark
#               "not measured" naming the hog, no point lost otherwise
#   gpus        scripts/check_shared_gpu.py gpus: a class of four copies of solutions/ through
#               batch --gpus 0, then --gpus all, on GPUS_EXERCISES (default ch01): full marks,
#               and at most 0.6 of the time with two GPUs or more ("off" with one GPU)
#   class       scripts/check_fixture_class.py: CLASS_FIXTURES (default all) graded as one class
#               through `grader batch --jobs CLASS_JOBS` (default 4), with solutions/ and
#               skeletons/ as two more students when CLASS_SOLUTIONS=1 (the default), CLASS_ROUNDS
#               times (default 1); every report must match its expect.toml (solutions: full
#               marks; skeletons: compiled, nothing earned), each graded in the sandbox
#   service     scripts/check_service.py: `grader serve` with two workers on this GPU, a class of
#               four uploads of SERVICE_CHAPTER (default ch01_programming_model) sent through
#               the exported Gradescope run_autograder and PrairieLearn entrypoint (export-gradescope
#               and export-prairielearn --service URL, run as the platforms run them; solutions: every point;
#               skeletons: none), then a service killed mid-grade and started again: the job is
#               graded again to full marks (needs Flask and Waitress; off unless SERVICE=1)
#   pytest      the course's GPU tests (CI runs the others) with COURSE_REQUIRE_GPU=1: every
#               fixture under tests/fixtures/submissions graded and checked against its
#               expect.toml, in FIXTURES order; a GPU test that would skip fails instead
#               (class and pytest grade a fixture that holds patches as its copy with the
#               patches applied to solutions/, in build/fixtures/<name>: tests/fixture_files.py)
# The last thing printed is a table: one row per stage, then one per exercise and report.
# Logs and reports go to $OUT (default build/gpu-check). Exit status 1 when any stage failed.
# Knobs: RUNS (default 3), EXERCISES ("ch01 ch02", default all), SKELETONS=0, SUPPORT=0,
# PROFILE=1, CALIBRATE=1, SHARED=0, NEIGHBOUR=0, GPUS=0, STUDENT=0, STUDENT_OF ("solutions", "skeletons" or both, the default: which copies the student
# stage grades), INCREMENTAL=0, INCREMENTAL_CHAPTERS, INCREMENTAL_LIMIT_S, INCREMENTAL_MEDIAN_S,
# BATCH=0, PYTEST=0, SERVICE=1, SERVICE_CHAPTER,
# FIXTURES (fixture names, comma-separated, in the order to grade; default all), FIXTURE_RUNS
# (grade the fixtures that many times in a row; default 1), SEED, PARALLEL (grade --parallel N
# for solutions and skeletons; default: the grader's own choice). A stage turned off by a knob
# is listed as "off" in the table. RUN_STAGES ("solutions support skeletons") runs exactly the
# stages it names, every other one off whatever its knob says (solutions RUNS times); a name
# that is no stage stops the check (exit 2). PLAN=1 prints which stages would run and exits,
# before set-up: on a lent GPU, where time is short, the stages left on by default cost most.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-check}
# Every stage but solutions, each with its knob (the name in capitals); these are off by default.
OPTIONAL_STAGES=(support shared neighbour gpus skeletons student incremental batch profile
                 calibrate class service pytest)
OFF_BY_DEFAULT=" profile calibrate class service "
if [ -n "${RUN_STAGES:-}" ]; then
  for name in $RUN_STAGES; do
    case " solutions ${OPTIONAL_STAGES[*]} " in
      *" $name "*) ;;
      *) echo "gpu_check: '$name' in RUN_STAGES is no stage (stages: solutions" \
              "${OPTIONAL_STAGES[*]})" >&2
         exit 2 ;;
    esac
  done
  case " $RUN_STAGES " in *" solutions "*) ;; *) RUNS=0 ;; esac
  for name in "${OPTIONAL_STAGES[@]}"; do
    case " $RUN_STAGES " in
      *" $name "*) printf -v "${name^^}" 1 ;;
      *) printf -v "${name^^}" 0 ;;
    esac
  done
fi
RUNS=${RUNS:-3}
# Each stage's knob as every stage below reads it: as given, else its default.
for name in "${OPTIONAL_STAGES[@]}"; do
  knob=${name^^}
  case "$OFF_BY_DEFAULT" in *" $name "*) default=0 ;; *) default=1 ;; esac
  printf -v "$knob" '%s' "${!knob:-$default}"
done
if [ "${PLAN:-0}" = 1 ]; then
  echo "solutions $RUNS run(s)"
  for name in "${OPTIONAL_STAGES[@]}"; do
    knob=${name^^}
    if [ "${!knob}" = 1 ]; then echo "$name on"; else echo "$name off"; fi
  done
  exit 0
fi
FIXTURES=${FIXTURES:-all}
mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1
. scripts/setup.sh || { echo "gpu_check: set-up failed" >&2; exit 1; }

STAGES=()
status=0
record() {  # record STAGE ok|FAILED|off DETAIL
  STAGES+=("$(printf '%-17s %-7s %s' "$1" "$2" "$3")")
  if [ "$2" = FAILED ]; then
    status=1
    echo "gpu_check: stage $1 FAILED: $3" >&2
  fi
}

if ! nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.mem --format=csv \
    > "$OUT/logs/gpu.txt" 2>&1; then
  cat "$OUT/logs/gpu.txt" >&2
  echo "gpu_check: nvidia-smi failed: this check needs an NVIDIA GPU" >&2
  exit 1
fi
cat "$OUT/logs/gpu.txt"
SEED=${SEED:-$($PY -c 'import secrets; print(secrets.randbits(32))')}
ONLY=()
for e in ${EXERCISES:-}; do ONLY+=(-e "$e"); done
[ -n "${PARALLEL:-}" ] && ONLY+=(--parallel "$PARALLEL")
# At the depth of the grader's own build directories (build/grade/<name>-<hash>): ccache keys
# on the relative paths Meson writes, so only builds at the same depth share objects.
SOLUTIONS_BUILD=build/grade/solutions-gpu-check
SKELETONS_BUILD=build/grade/skeletons-gpu-check
REPORTS=()

# grade_stage STAGE SUBMISSION BUILD_DIR SEED CHECK_ARGS...: grades SUBMISSION into BUILD_DIR
# (report and log logs/STAGE.json and .txt), checks the report with check_report.py CHECK_ARGS
# and records the stage, its detail being the check's first line and the grade's wall time
# and phases.
grade_stage() {
  local stage=$1 submission=$2 build_dir=$3 seed=$4 detail=""
  shift 4
  local report="$OUT/logs/$stage.json" log="$OUT/logs/$stage.txt"
  if $PY -m grader grade "$submission" "${ONLY[@]}" -q --seed "$seed" --build-dir "$build_dir" \
        --json "$report" > "$log" 2>&1 \
     && detail=$($PY scripts/check_report.py "$report" "$@" 2>&1); then
    record "$stage" ok "$(echo "$detail" | head -n 1); $($PY scripts/time_table.py "$report" | tail -n 1 | cut -d';' -f1)"
  else
    tail -n 20 "$log"
    record "$stage" FAILED "$(echo "${detail:-grader failed, see logs/$stage.txt}" | tr '\n' ' ' | cut -c1-300)"
  fi
}

# --- solutions ------------------------------------------------------------------------------
for i in $(seq 1 "$RUNS"); do
  echo "== solutions, run $i (seed $((SEED + i)))"
  grade_stage "solutions-$i" solutions "$SOLUTIONS_BUILD" $((SEED + i)) --full-marks
  [ -f "$OUT/logs/solutions-$i.json" ] && REPORTS+=("$OUT/logs/solutions-$i.json")
done

# --- support library GPU tests ----------------------------------------------------------------
if [ "$SUPPORT" = 1 ]; then
  echo "== support library GPU tests"
  if [ ! -f "$SOLUTIONS_BUILD/build.ninja" ]; then
    record support FAILED "no build directory $SOLUTIONS_BUILD (the solutions stage did not configure it)"
  elif ! ninja -C "$SOLUTIONS_BUILD" support_gpu_tests > "$OUT/logs/support-build.txt" 2>&1; then
    tail -n 20 "$OUT/logs/support-build.txt"
    record support FAILED "support_gpu_tests did not build (logs/support-build.txt)"
  else
    "$SOLUTIONS_BUILD/support_gpu_tests" > "$OUT/logs/support-gpu.txt" 2>&1
    code=$?
    if [ $code = 0 ]; then
      record support ok "$(grep -E '^\[  PASSED  \]' "$OUT/logs/support-gpu.txt" | head -n 1)"
    else
      tail -n 30 "$OUT/logs/support-gpu.txt"
      record support FAILED "support_gpu_tests exit status $code$([ $code = 77 ] && echo ' (no GPU seen)')"
    fi
  fi
else
  record support off "SUPPORT=0"
fi

# --- profiling and calibration ----------------------------------------------------------------
# The solutions are profiled first; the calibration (from the solutions' reports, the profiled
# one included) then holds the reference counters the fixtures' profiles are compared with, so
# with CALIBRATE=1 its file goes into calibrations/ of this checkout before they are graded.
if [ "$PROFILE" = 1 ]; then
  echo "== profile of the solutions (grade --profile)"
  only=(); for e in ${PROFILE_EXERCISES:-}; do only+=(-e "$e"); done
  report="$OUT/logs/profile-solutions.json"
  detail=""
  if $PY -m grader grade solutions "${only[@]}" --profile -q --seed "$SEED" \
        --build-dir "$SOLUTIONS_BUILD" --json "$report" > "$OUT/logs/profile-solutions.txt" 2>&1 \
     && detail=$($PY scripts/check_profile.py solutions "$report" 2>&1); then
    record profile-solutions ok "$(echo "$detail" | tail -n 1)"
  else
    tail -n 20 "$OUT/logs/profile-solutions.txt"
    echo "$detail" | head -n 30
    record profile-solutions FAILED "$(echo "${detail:-grader failed, see logs/profile-solutions.txt}" | tr '\n' ' ' | cut -c1-300)"
  fi
else
  record profile off "PROFILE=0 (PROFILE=1 grades with --profile)"
fi

if [ "$CALIBRATE" = 1 ]; then
  echo "== calibrate (from the solutions' reports)"
  sol=(); for f in "$OUT"/logs/solutions-*.json "$OUT/logs/profile-solutions.json"; do [ -f "$f" ] && sol+=(--from-report "$f"); done
  if [ ${#sol[@]} = 0 ]; then
    record calibrate FAILED "no solutions report to calibrate from (RUNS=0 and PROFILE=0)"
  elif $PY -m grader calibrate "${sol[@]}" --out "$OUT/calibrations" > "$OUT/logs/calibrate.txt" 2>&1 \
     && $PY -m grader calibrate "${sol[@]}" --out "$OUT/calibrations-unreachable" \
          --full-at "vector_add/bandwidth=100" > "$OUT/logs/calibrate-unreachable.txt" 2>&1 \
     && grep -qE "^vector_add/bandwidth +100x .* yes " "$OUT/logs/calibrate-unreachable.txt"; then
    cp "$OUT"/calibrations/*.json calibrations/
    record calibrate ok "$(ls "$OUT"/calibrations/*.json | xargs -n1 basename) from $(( ${#sol[@]} / 2 )) reports: $(grep -E 'thresholds flagged' "$OUT/logs/calibrate.txt" | cut -d';' -f1); vector_add/bandwidth at full_at 100 flagged"
  else
    tail -n 20 "$OUT/logs/calibrate.txt" "$OUT/logs/calibrate-unreachable.txt" 2>/dev/null
    record calibrate FAILED "see logs/calibrate.txt and logs/calibrate-unreachable.txt"
  fi
else
  record calibrate off "CALIBRATE=0 (CALIBRATE=1 calibrates this GPU from the solutions' reports)"
fi

if [ "$PROFILE" = 1 ]; then
  for name in ${PROFILE_FIXTURES-ch04_transpose_unpadded ch04_transpose_without_shared ch01_poor_launch}; do
    echo "== profile of fixture $name"
    dir=$($PY -c "import sys; sys.path.insert(0, 'tests'); import fixture_files; print(fixture_files.submission(fixture_files.FIXTURES / '$name'))")
    exercise=$($PY -c "import sys; sys.path.insert(0, 'scripts'); import check_profile; print(check_profile.EXPLAINED_BY['$name'][0])")
    report="$OUT/logs/profile-$name.json"
    detail=""
    $PY -m grader grade "$dir" -e "$exercise" --profile -q --seed "$SEED" \
        --build-dir "build/grade/profile-$name" --json "$report" > "$OUT/logs/profile-$name.txt" 2>&1
    if [ -f "$report" ] && detail=$($PY scripts/check_profile.py fixture "$name" "$report" 2>&1); then
      record "profile-${name:0:12}" ok "$(echo "$detail" | head -n 1 | cut -c1-220)"
    else
      tail -n 20 "$OUT/logs/profile-$name.txt"
      record "profile-${name:0:12}" FAILED "$(echo "${detail:-grader failed, see logs/profile-$name.txt}" | tr '\n' ' ' | cut -c1-300)"
    fi
  done
fi

# --- graders sharing the GPU ------------------------------------------------------------------
# shared_stage STAGE CHECK ARGS...: runs scripts/check_shared_gpu.py CHECK ARGS (log
# logs/STAGE.txt); its summary line is the detail; its exit status 3 means "not on this machine".
shared_stage() {
  local stage=$1 log="$OUT/logs/$1.txt" detail code
  shift
  detail=$($PY scripts/check_shared_gpu.py "$@" 2> "$log")
  code=$?
  if [ $code = 0 ]; then record "$stage" ok "$detail"
  elif [ $code = 3 ]; then record "$stage" off "$detail"
  else
    tail -n 20 "$log"
    record "$stage" FAILED "$(echo "$detail" | tr '\n' ' ' | cut -c1-300)"
  fi
}
if [ "$SHARED" = 1 ]; then
  echo "== shared: ${SHARED_GRADERS:-3} graders of solutions/ at once, ${SHARED_ROUNDS:-1} rounds"
  SHARED_ONLY=()
  for e in ${SHARED_EXERCISES:-${EXERCISES:-}}; do SHARED_ONLY+=(-e "$e"); done
  # SHARED_ALONE=0: no grader alone first (its time comes from another run).
  alone_build=$SOLUTIONS_BUILD; [ "${SHARED_ALONE:-1}" = 0 ] && alone_build=none
  shared_stage shared concurrent solutions --alone-build "$alone_build" \
    --graders "${SHARED_GRADERS:-3}" --rounds "${SHARED_ROUNDS:-1}" --seed "$SEED" \
    --out "$OUT/shared" "${SHARED_ONLY[@]}"
else
  record shared off "SHARED=0"
fi
if [ "$NEIGHBOUR" = 1 ]; then
  echo "== neighbour: a grade beside a process that keeps the GPU busy"
  if nvcc -o "$OUT/gpu_hog" scripts/gpu_hog.cu > "$OUT/logs/gpu_hog-build.txt" 2>&1; then
    NEIGHBOUR_ONLY=()
    for e in ${NEIGHBOUR_EXERCISES:-ch01}; do NEIGHBOUR_ONLY+=(-e "$e"); done
    shared_stage neighbour neighbour solutions --hog "$OUT/gpu_hog" \
      --build-dir "$SOLUTIONS_BUILD" --seed "$SEED" --out "$OUT/neighbour" "${NEIGHBOUR_ONLY[@]}"
  else
    record neighbour FAILED "scripts/gpu_hog.cu did not compile (logs/gpu_hog-build.txt)"
  fi
else
  record neighbour off "NEIGHBOUR=0"
fi
if [ "$GPUS" = 1 ]; then
  echo "== gpus: batch --gpus all against one GPU"
  GPUS_ONLY=()
  for e in ${GPUS_EXERCISES:-ch01}; do GPUS_ONLY+=(-e "$e"); done
  shared_stage gpus gpus solutions --seed "$SEED" --out "$OUT/gpus" "${GPUS_ONLY[@]}"
else
  record gpus off "GPUS=0"
fi

# --- skeletons ----------------------------------------------------------------------------
if [ "$SKELETONS" = 1 ]; then
  echo "== skeletons"
  grade_stage skeletons skeletons "$SKELETONS_BUILD" "$SEED" --all-compiled --no-correctness
  [ -f "$OUT/logs/skeletons.json" ] && REPORTS+=("$OUT/logs/skeletons.json")
else
  record skeletons off "SKELETONS=0"
fi

# --- one more student, the course already built ------------------------------------------------
if [ "$STUDENT" = 1 ]; then
  for what in ${STUDENT_OF:-solutions skeletons}; do
    build=$SOLUTIONS_BUILD; expect=(--full-marks)
    [ $what = skeletons ] && { build=$SKELETONS_BUILD; expect=(--all-compiled --no-correctness); }
    echo "== one more student: a changed copy of $what into $build"
    if [ ! -f "$build/build.ninja" ]; then
      record "student-$what" FAILED "no build directory $build (its stage above is off or did not configure it)"
      continue
    fi
    copy=build/student-copies/$what
    rm -rf "$copy" && mkdir -p build/student-copies && cp -r "$what" "$copy"
    find "$copy" -name '*.cu' -exec sh -c 'echo "// a student copy" >> "$1"' _ {} \;
    grade_stage "student-$what" "$copy" "$build" "$SEED" "${expect[@]}"
  done
else
  record student off "STUDENT=0"
fi

# --- incremental: one exercise changed, graded alone -------------------------------------------
if [ "$INCREMENTAL" = 1 ]; then
  echo "== incremental (each exercise of ${INCREMENTAL_CHAPTERS:-every chapter} changed and graded alone)"
  copy=build/student-copies/incremental
  rm -rf "$copy" && mkdir -p build/student-copies && cp -r solutions "$copy"
  # INCREMENTAL_CHAPTERS is a list of chapter prefixes, word-split on purpose.
  # shellcheck disable=SC2086
  if $PY scripts/incremental_times.py "$copy" "$SOLUTIONS_BUILD" --seed "$SEED" \
        --chapters ${INCREMENTAL_CHAPTERS:-ch} --json-dir "$OUT/logs/incremental" \
        --limit "${INCREMENTAL_LIMIT_S:-12}" --median-limit "${INCREMENTAL_MEDIAN_S:-8}" \
        > "$OUT/logs/incremental.txt" 2>&1; then
    record incremental ok "$(grep '^slowest:' "$OUT/logs/incremental.txt")"
  else
    tail -n 20 "$OUT/logs/incremental.txt"
    record incremental FAILED "$( (grep '^slowest:' "$OUT/logs/incremental.txt"; grep '^incremental_times:' "$OUT/logs/incremental.txt") | tr '\n' ' ' | cut -c1-300)"
  fi
else
  record incremental off "INCREMENTAL=0"
fi

# --- batch grading of a class, stopped and resumed ------------------------------------------
if [ "$BATCH" = 1 ]; then
  echo "== batch (a class of five, stopped and resumed)"
  BATCH_ONLY=()
  for e in ${BATCH_EXERCISES:-ch01}; do BATCH_ONLY+=(-e "$e"); done
  if detail=$($PY scripts/check_batch.py "$OUT/batch" "${BATCH_ONLY[@]}" --seed "$SEED" \
        2> "$OUT/logs/batch-problems.txt"); then
    record batch ok "$detail"
  else
    cat "$OUT/logs/batch-problems.txt" >&2
    cp "$OUT"/batch/*.log "$OUT/logs/" 2>/dev/null
    record batch FAILED "$(head -n 3 "$OUT/logs/batch-problems.txt" | tr '\n' ' ' | cut -c1-300)"
  fi
  cp "$OUT/batch/batch/gradebook.csv" "$OUT/logs/batch-gradebook.csv" 2>/dev/null
else
  record batch off "BATCH=0"
fi

# --- the fixtures as one class ----------------------------------------------------------------
if [ "$CLASS" = 1 ]; then
  echo "== fixtures graded as a class"
  extra=()
  [ "${CLASS_SOLUTIONS:-1}" = 1 ] && extra+=(--solutions --skeletons)
  $PY scripts/check_fixture_class.py build/fixture-class --fixtures "${CLASS_FIXTURES:-all}" \
      --jobs "${CLASS_JOBS:-4}" --rounds "${CLASS_ROUNDS:-1}" --seed "$SEED" "${extra[@]}" \
      > "$OUT/logs/class.txt" 2>&1
  code=$?
  detail=$(tail -n 1 "$OUT/logs/class.txt")
  if [ $code = 0 ]; then
    record class ok "$detail"
  else
    grep -v ": ok (" "$OUT/logs/class.txt" | head -n 40
    record class FAILED "$detail"
  fi
  for f in build/fixture-class/round-*/reports/*.json; do [ -f "$f" ] && REPORTS+=("$f"); done
else
  record class off "CLASS=0 (CLASS=1 grades the fixtures as one class)"
fi

# --- the grading service ------------------------------------------------------------------
if [ "$SERVICE" = 1 ]; then
  log="$OUT/logs/service.txt"
  echo "== grading service"
  if $PY scripts/check_service.py build/service-check --out "$OUT/logs/service" \
      --chapter "${SERVICE_CHAPTER:-ch01_programming_model}" > "$log" 2>&1; then
    record service ok "$(tail -n 1 "$log")"
  else
    cat "$log"
    record service FAILED "$(grep FAILED "$log" | head -n 3 | tr '\n' ' ')"
  fi
else
  record service off "SERVICE=0 (SERVICE=1 grades a class through grader serve)"
fi

# --- the course's tests, GPU fixtures included ---------------------------------------------
if [ "$PYTEST" = 1 ]; then
  # FIXTURE_RUNS > 1 grades the fixtures that many times in a row (a verdict must hold in
  # every run), one table row per run; the reports kept are the last run's.
  for k in $(seq 1 "${FIXTURE_RUNS:-1}"); do
    name=pytest; log="$OUT/logs/pytest.txt"
    [ "${FIXTURE_RUNS:-1}" = 1 ] || { name="pytest-$k"; log="$OUT/logs/pytest-$k.txt"; }
    echo "== course tests (pytest; fixtures graded on the GPU), run $k"
    if COURSE_REQUIRE_GPU=1 COURSE_FIXTURE_REPORTS="$OUT/logs" COURSE_FIXTURES="$FIXTURES" \
        $PY -m pytest tests -m gpu -v --timeout=1800 -p no:cacheprovider -rfEs \
        > "$log" 2>&1; then
      record "$name" ok "$(tail -n 1 "$log")"
    else
      grep -E "^(FAILED|ERROR)" "$log" | head -n 30
      record "$name" FAILED "$(tail -n 1 "$log")"
    fi
  done
  for f in "$OUT"/logs/fixture-*.json; do [ -f "$f" ] && REPORTS+=("$f"); done
else
  record pytest off "PYTEST=0"
fi

tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs
{
  if [ ${#REPORTS[@]} -gt 0 ]; then
    $PY scripts/summarize.py "${REPORTS[@]}"
    echo
  fi
  if command -v ccache > /dev/null 2>&1; then
    echo "ccache: $(ccache -s 2>/dev/null | grep -E '^ *(Hits|Misses):' | tr -s ' ' | tr '\n' ' ')"
  fi
  echo "stage             status  detail"
  printf '%s\n' "${STAGES[@]}"
  [ $status = 0 ] && echo "gpu_check: every stage passed" || echo "gpu_check: FAILED"
} | tee "$OUT/summary.txt"
exit $status
