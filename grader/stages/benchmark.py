"""The benchmark stage: runs the bench binary, reads its JSON and turns each [[performance]]
criterion into a Metric: the measure's rate over the baseline's, both from the same run. The
baseline comes from the same process, or, for a ceiling several exercises share (a copy, CUB,
cuBLAS), from the run's course-only ceilings program (grader/stages/ceilings.py).

Only the ratios are measured here; grader.scoring turns them into points.
"""

from __future__ import annotations

import math
from pathlib import Path

from grader.manifest import Exercise, Performance
from grader.model import BenchmarkDetails, Metric, StageName, StageResult, StageStatus
from grader.stages.ceilings import Ceilings
from grader.stages.measured import Measured
from grader.stages.tests import SANDBOX_HIDES_GPU
from grader.stages.common import (NO_GPU_EXIT, GradeOptions, clip, run_reporting,
                                  student_scratch)


# Where a benchmark program's time went (its JSON's "timing"): starting CUDA, the measurements,
# and the whole program; the rest is its inputs, references and checks.
TIMING_KEYS = ("init_s", "measured_s", "total_s")


def run(options: GradeOptions, ex: Exercise, binary: Path) -> StageResult:
    """Runs the benchmark and keeps what it measured; ratios() turns that into metrics once
    the run's shared ceilings are measured. A benchmark that failed gets its metrics here."""
    scratch = student_scratch(options, ex, StageName.BENCHMARK)
    out = scratch / "benchmark.json"
    result, data, nonce = run_reporting(
        options, [str(binary), "--ceilings-elsewhere", "--json", str(out)], out,
        scratch / "nonce", ex.benchmark_timeout_s, scratch=scratch)
    stage = StageResult(StageName.BENCHMARK, StageStatus.PASSED,
                        duration_s=round(result.duration_s, 2), output=clip(result.output, 4096))
    if result.returncode == NO_GPU_EXIT:
        stage.status = StageStatus.ERROR if options.sandbox.on else StageStatus.SKIPPED
        stage.message = SANDBOX_HIDES_GPU if options.sandbox.on else "no GPU available to benchmark"
        return stage
    if not isinstance(data, dict) or data.get("completed") is not True:
        stage.status = StageStatus.TIMED_OUT if result.timed_out else StageStatus.CRASHED
        stage.message = f"the benchmark {result.describe_exit()} without finishing its report"
        stage.metrics = [metric(perf, {}, stage.message) for perf in ex.performance]
        return stage
    if data.get("nonce") != nonce:
        # Only code in the benchmark's process could have written it: the student's.
        stage.status = StageStatus.FAILED
        stage.message = ("the benchmark's results were not written by the course's harness "
                         "(no valid run nonce): they were forged, and count for nothing")
        stage.metrics = [metric(perf, {}, stage.message) for perf in ex.performance]
        return stage
    entries = data.get("measurements", [])
    stage.details.measurements = entries if isinstance(entries, list) else []
    timing = data.get("timing")
    if isinstance(timing, dict):
        stage.details.timing = {k: v for k, v in timing.items()
                                if k in TIMING_KEYS and isinstance(v, (int, float))
                                and not isinstance(v, bool)}
    failed_requirements = [r for r in data.get("requirements", [])
                           if isinstance(r, dict) and not r.get("ok")]
    problem = ""
    if failed_requirements:
        problem = "; ".join(f"{r.get('name')}: {r.get('message', '')}"
                            for r in failed_requirements)
    elif data.get("errors"):
        problem = "; ".join(map(str, data["errors"]))
    stage.details.problem = problem
    return stage


def timing_suspect(stage: StageResult | None) -> bool:
    """Whether a measurement was found invalid only by what its timing suggests (the harness's
    host-time check, a gate that gave up waiting): such a verdict must hold on a second
    measurement with nothing else on the GPU before it is given (grader/stages/measured.py)."""
    if stage is None:
        return False
    return any(isinstance(m, dict) and not m.get("valid", True) and m.get("timing_only") is True
               for m in stage.details.get("measurements", []))


def from_measured(ex: Exercise, measured: Measured[StageResult]) -> StageResult:
    """The benchmark stage of a measurement taken alone on the GPU: as it ran, or not measured
    when another process kept the GPU busy, or marked when --allow-shared-gpu kept it."""
    why = measured.disturbance.describe() if measured.disturbance is not None else ""
    if measured.result is None or measured.not_measured:
        message = f"not measured: {why}"
        stage = StageResult(StageName.BENCHMARK, StageStatus.NOT_MEASURED, message=message,
                            details=BenchmarkDetails(disturbed=why, attempts=measured.attempts))
        stage.metrics = [metric(perf, {}, message) for perf in ex.performance]
        return stage
    stage = measured.result
    stage.details.attempts = measured.attempts
    if measured.shared:
        stage.details.shared_gpu = why
    if measured.confirmed:
        stage.details.confirmed = True
        for entry in stage.details.get("measurements", []):
            if isinstance(entry, dict) and entry.get("timing_only") is True \
                    and not entry.get("valid", True):
                entry["problem"] = (f"{entry.get('problem', '')} (seen on two measurements "
                                    "with nothing else on the GPU)")
    return stage


def waiting_for_ratios(stage: StageResult) -> bool:
    """The benchmark ran and reported; its metrics wait for ratios()."""
    return stage.status == StageStatus.PASSED and not stage.metrics and "problem" in stage.details


def ratios(ex: Exercise, stage: StageResult, ceilings: Ceilings) -> None:
    """Each criterion's ratio, the shared ceilings the benchmark recorded taken from the run's
    ceilings programs (measured by ceilings.prepare(), or now)."""
    if not waiting_for_ratios(stage):
        return
    entries = stage.details.measurements
    ceilings_problem, measured_now = ceilings.complete(ex, entries)
    stage.details.ceilings_measured = measured_now
    measurements = {m.get("name"): m for m in entries if isinstance(m, dict)}
    stage.metrics = [metric(perf, measurements, stage.details.problem)
                     for perf in ex.performance]
    busy = ceilings.disturbed(ex, entries)
    if busy and any(m.ratio is None for m in stage.metrics):
        stage.status = StageStatus.NOT_MEASURED
        stage.details.disturbed = busy
        stage.message = f"a shared ceiling was not measured: {busy}"
    elif ceilings_problem and any(m.ratio is None for m in stage.metrics):
        stage.status = StageStatus.ERROR
        stage.message = f"the course could not measure a ceiling (not your code): {ceilings_problem}"


def not_run(why: str) -> StageResult:
    return StageResult(StageName.BENCHMARK, StageStatus.SKIPPED, message=why)


def metric(perf: Performance, measurements: dict, problem: str) -> Metric:
    """The criterion's ratio, or no ratio and a message saying why it could not be taken."""
    m = measurements.get(perf.measure)
    b = measurements.get(perf.baseline)
    out = Metric(perf.name, perf.description, perf.measure, perf.baseline, None, None, "",
                 None, perf.full_at, perf.zero_at, 0.0, perf.points)
    if problem:
        out.message = problem
    elif m is None or b is None:
        missing = perf.measure if m is None else perf.baseline
        out.message = f"the benchmark did not report {missing!r}"
    elif not m.get("valid", False):
        out.message = f"{perf.measure}: {m.get('problem', 'invalid')}"
    elif _rate(m) is None:
        out.message = f"{perf.measure}: no finite rate ({m.get('rate')!r})"
    elif not b.get("valid", False) or not _rate(b):
        out.message = f"baseline {perf.baseline}: {b.get('problem') or 'no rate'}"
    else:
        out.value = _rate(m)
        out.baseline_value = _rate(b)
        out.unit = str(m.get("unit", ""))
        out.ratio = out.value / out.baseline_value
        out.ratio_interval = ratio_interval(out.ratio, m, b)
        repeats = [m.get("repeats"), b.get("repeats")]
        if all(isinstance(n, int) and not isinstance(n, bool) for n in repeats):
            out.repeats = repeats
    return out


def ratio_interval(ratio: float, measure: dict, baseline: dict) -> list[float] | None:
    """[low, high] of the ratio, both medians at the ends of their 95% intervals that make it
    worst and best: a rate is work over time, so the measure's slowest end (ci_high_ms) over the
    baseline's fastest (ci_low_ms) is the low end. None where an interval is missing."""
    def ends(entry: dict) -> tuple[float, float, float] | None:
        values = [entry.get(k) for k in ("ci_low_ms", "median_ms", "ci_high_ms")]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                   and math.isfinite(v) and v > 0 for v in values):
            return None
        return values[0], values[1], values[2]

    m, b = ends(measure), ends(baseline)
    if m is None or b is None:
        return None
    low = ratio * (m[1] / m[2]) * (b[0] / b[1])
    high = ratio * (m[1] / m[0]) * (b[2] / b[1])
    return [round(low, 4), round(high, 4)]


def _rate(entry: dict) -> float | None:
    """The measurement's rate when it is a finite number (the JSON writes NaN as null)."""
    value = entry.get("rate")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None

