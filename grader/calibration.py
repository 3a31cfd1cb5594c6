"""Calibrations: whether the course's thresholds hold on one GPU model, and the instructor's
decisions where they do not.

`python3 -m grader calibrate` grades the reference solutions a few times on the local GPU (or
reads saved reports of such grades), and for every [[performance]] metric records the ratios
of each run, their median and spread, and how far the reference's worst run clears full
marks. A threshold that it does not clear by the margin is flagged, and the instructor decides
for it: keep it, lower it to what the reference reaches here (its median less the margin), or
drop its points. The file, calibrations/<slug>.json, is per GPU model; `grade` applies its
decisions to the manifests before grading (apply()), so scoring stays a pure function of the
stages and the thresholds, and records what it changed in the report.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable

from grader import __version__, manifest, model, render
from grader.errors import EXIT_INCOMPLETE, GraderError

SCHEMA = 1
FOLDER = "calibrations"
DECISIONS = ("keep", "lower", "drop")
DEFAULT_MARGIN = 0.05
DEFAULT_RUNS = 3
COURSE_ROOT = Path(__file__).resolve().parent.parent
COPY_PREFIX = "copy:"
SGEMM_PREFIX = "matmul_ladder/cublas_sgemm:"
# The command that grades the solutions once; a test stands a fake in for it.
GRADE = [sys.executable, "-m", "grader", "grade"]
# A worst run this close to full marks plus the margin clears it: float noise flags nothing.
_EPSILON = 1e-9


def slug(gpu_name: str) -> str:
    """The GPU model's file name: "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"."""
    text = re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-")
    if not text:
        raise GraderError(f"the GPU name {gpu_name!r} has no letters or digits to name its "
                          "calibration by")
    return text


def folder(root: Path) -> Path:
    return Path(root) / FOLDER


def path_for(root: Path, gpu_name: str) -> Path:
    return folder(root) / f"{slug(gpu_name)}.json"


def relative(path: Path, root: Path) -> str:
    """The file as the report names it: relative to the course root where it lies in it."""
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)


def metric_id(exercise: str, metric: str) -> str:
    return f"{exercise.rsplit('/', 1)[-1]}/{metric}"


# ---------------------------------------------------------------------------- the file

def load(path: Path) -> dict:
    """A calibration file, checked; GraderError (one line) naming it when it is not one."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GraderError(f"calibration {path} does not exist") from None
    except OSError as error:
        raise GraderError(f"calibration {path} cannot be read "
                          f"({error.strerror or error})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise GraderError(f"calibration {path} is not JSON ({error})") from None
    problem = _problem(data)
    if problem:
        raise GraderError(f"calibration {path} is malformed: {problem}")
    return data


def _problem(data) -> str:
    """What makes `data` no calibration of this schema, or ""."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("schema") != SCHEMA:
        return f"schema {data.get('schema')!r}, this grader reads {SCHEMA}"
    gpu = data.get("gpu")
    if not isinstance(gpu, dict) or not isinstance(gpu.get("name"), str):
        return "no gpu.name"
    metrics = data.get("metrics")
    if not isinstance(metrics, dict):
        return "no metrics object"
    for name, entry in metrics.items():
        if not isinstance(entry, dict):
            return f"metrics.{name} is not an object"
        if entry.get("decision") not in DECISIONS:
            return f"metrics.{name}.decision is {entry.get('decision')!r}, not one of " \
                   f"{', '.join(DECISIONS)}"
        for key in ("full_at", "lowered_full_at", "median"):
            value = entry.get(key)
            if value is not None and not _number(value):
                return f"metrics.{name}.{key} is not a number"
        if not _number(entry.get("full_at")):
            return f"metrics.{name}.full_at is missing"
    if not isinstance(data.get("profile", {}), dict):
        return "profile is not an object"
    return ""


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def find(root: Path, gpu_name: str) -> tuple[dict | None, Path | None]:
    """The calibration of this GPU model under root/calibrations/, or (None, None)."""
    path = path_for(root, gpu_name)
    if not path.is_file():
        return None, None
    return load(path), path


def write(path: Path, data: dict) -> None:
    """Whole or not at all (render.write_atomically)."""
    try:
        render.write_atomically(Path(path), json.dumps(data, indent=2) + "\n")
    except OSError as error:
        raise GraderError(f"cannot write the calibration {path}: {error.strerror}") from None


# ------------------------------------------------------------------------- measuring

def grade_runs(root: Path, runs: int, patterns: list[str], profile: bool,
               say: Callable[[str], None]) -> list[model.Report]:
    """Grades solutions/ `runs` times, one `grade` process each, and returns the reports."""
    reports = []
    with tempfile.TemporaryDirectory(prefix="grader-calibrate-") as tmp:
        for i in range(1, runs + 1):
            say(f"calibrate: grading solutions/, run {i} of {runs}")
            out = Path(tmp) / f"run-{i}.json"
            command = [*GRADE, "solutions", "--json", str(out), "-q"]
            command += ["--profile"] if profile else []
            for pattern in patterns:
                command += ["-e", pattern]
            result = subprocess.run(command, cwd=root, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
            if result.returncode == EXIT_INCOMPLETE:
                raise GraderError(f"calibrate: run {i} is incomplete (another process kept the "
                                  "GPU busy); calibrate again when the GPU is free")
            if result.returncode != 0 or not out.is_file():
                lines = result.stderr.strip().splitlines()
                why = lines[-1].removeprefix("grader: error: ") if lines \
                    else f"exit status {result.returncode}"
                raise GraderError(f"calibrate: grading solutions/ failed in run {i}: {why}")
            reports.append(model.Report.load(out))
    return reports


def parse_full_at(items: Iterable[str]) -> dict[str, float]:
    """--full-at EXERCISE/METRIC=VALUE, each: {metric id: value}."""
    out = {}
    for item in items:
        name, sep, text = item.partition("=")
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not sep or "/" not in name or not (math.isfinite(value) and value > 0):
            raise GraderError(f"--full-at {item}: give EXERCISE/METRIC=VALUE with a ratio "
                              "above 0, e.g. vector_add/bandwidth=0.9")
        exercise, _, metric = name.rpartition("/")
        out[metric_id(exercise, metric)] = value
    return out


def parse_decisions(items: Iterable[str]) -> dict[str, str]:
    """--decide EXERCISE/METRIC=keep|lower|drop, each: {metric id: decision}."""
    out = {}
    for item in items:
        name, sep, decision = item.partition("=")
        if not sep or "/" not in name or decision not in DECISIONS:
            raise GraderError(f"--decide {item}: give EXERCISE/METRIC=keep, =lower or =drop, "
                              "e.g. vector_add/bandwidth=lower")
        exercise, _, metric = name.rpartition("/")
        out[metric_id(exercise, metric)] = decision
    return out


def course_thresholds(exercises: list[manifest.Exercise]) -> dict[str, tuple[float, float]]:
    return {metric_id(ex.name, p.name): (p.full_at, p.zero_at)
            for ex in exercises for p in ex.performance}


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def compute(reports: list[model.Report], *, exercises: list[manifest.Exercise],
            margin: float = DEFAULT_MARGIN, full_at: dict[str, float] | None = None,
            only: set[str] | None = None, previous: dict | None = None,
            names: list[str] | None = None) -> dict:
    """The calibration of the GPU the reports ran on. `exercises`: the course's, whose
    thresholds are checked (a metric the course does not have keeps its report's); `full_at`:
    thresholds replaced for this calibration; `only`: the exercise names to calibrate;
    `previous`: this GPU's file so far, whose decisions are kept, and whose metrics and
    profiles of exercises not graded now stay as they were; `names`: how messages name each
    report."""
    if not reports:
        raise GraderError("calibrate: no runs to calibrate from")
    names = names or [f"run {i}" for i in range(1, len(reports) + 1)]
    gpu = _one_gpu(reports, names)
    overrides = dict(full_at or {})
    course = course_thresholds(exercises)
    ratios: dict[str, list[float]] = {}
    fallback: dict[str, tuple[float, float]] = {}
    graded: set[str] = set()
    for report in reports:
        for ex in report.exercises:
            if only is not None and ex.name not in only:
                continue
            graded.add(ex.name)
            bench = ex.stage(model.StageName.BENCHMARK)
            for metric in bench.metrics if bench is not None else []:
                key = metric_id(ex.name, metric.name)
                ratios.setdefault(key, [])
                fallback.setdefault(key, (metric.full_at, metric.zero_at))
                if _number(metric.ratio):
                    ratios[key].append(float(metric.ratio))
    unknown = sorted(set(overrides) - set(ratios))
    if unknown:
        raise GraderError(f"--full-at {unknown[0]}: no such metric in the runs; they measured "
                          f"{', '.join(list(ratios)[:6]) or 'none'}"
                          + (" ..." if len(ratios) > 6 else ""))
    old = (previous or {}).get("metrics", {})
    metrics = {}
    for key, values in ratios.items():
        full, zero = course.get(key, fallback[key])
        full = overrides.get(key, full)
        decision = old.get(key, {}).get("decision", "keep")
        metrics[key] = entry(values, full, zero, len(reports), margin, decision)
    # Metrics of exercises not graded this time (a calibration of some exercises, -e) stay.
    for key, kept in old.items():
        if key not in metrics and key.split("/", 1)[0] not in graded:
            metrics[key] = kept
    order = {key: i for i, key in enumerate(course)}
    metrics = dict(sorted(metrics.items(), key=lambda item: order.get(item[0], len(order))))
    profile = {name: counters for name, counters in (previous or {}).get("profile", {}).items()
               if name not in graded}
    profiled = _profile(reports, only)
    profile.update(profiled)
    # The counters keep the date they were measured on when this calibration measured none.
    earlier = previous or {}
    profile_date = _date(reports) if profiled else earlier.get(
        "profile_measured_at", earlier.get("measured_at")) if profile else None
    before = (previous or {}).get("gpu", {})
    bandwidth = _ceiling(reports, COPY_PREFIX, "GB/s")
    tflops = _ceiling(reports, SGEMM_PREFIX, "TFLOP/s")
    return {
        "schema": SCHEMA,
        "gpu": {"name": gpu.name, "compute_capability": gpu.compute_capability,
                "memory_mib": gpu.memory_mib,
                "memory_bandwidth_gbs": bandwidth if bandwidth is not None
                else before.get("memory_bandwidth_gbs"),
                "fp32_tflops": tflops if tflops is not None else before.get("fp32_tflops")},
        "measured_at": _date(reports),
        "profile_measured_at": profile_date,
        "grader_version": __version__,
        "runs": len(reports),
        "margin": margin,
        "metrics": metrics,
        "profile": dict(sorted(profile.items())),
    }


def entry(ratios: list[float], full_at: float, zero_at: float, runs: int, margin: float,
          decision: str = "keep") -> dict:
    """One metric's statistics. Flagged: a run without a ratio, or the reference's worst run
    not clearing full_at by the margin."""
    median = _median(ratios)
    spread = (max(ratios) - min(ratios)) / median if ratios and median else None
    above = min(ratios) / full_at - 1 if ratios and full_at > 0 else None
    flagged = len(ratios) < runs or above is None or above < margin - _EPSILON
    return {"full_at": full_at, "zero_at": zero_at, "ratios": [round(r, 4) for r in ratios],
            "median": _round(median), "spread": _round(spread),
            "margin_above_full": _round(above), "flagged": flagged, "decision": decision,
            "lowered_full_at": _lowered(median, margin) if decision == "lower" else None}


def _lowered(median: float | None, margin: float) -> float | None:
    return None if median is None else round(median * (1 - margin), 4)


def _one_gpu(reports: list[model.Report], names: list[str]) -> model.GpuInfo:
    first = None
    for report, name in zip(reports, names):
        if report.gpu is None or not report.gpu.name:
            raise GraderError(f"calibrate: {name} names no GPU: a calibration is of one GPU "
                              "model")
        if report.options.get("build_only"):
            raise GraderError(f"calibrate: {name} is of a --build-only run, which measured "
                              "nothing")
        if first is None:
            first = (report.gpu, name)
        elif report.gpu.name != first[0].name:
            raise GraderError(f"calibrate: the runs are on different GPU models ({first[0].name} "
                              f"in {first[1]}, {report.gpu.name} in {name}): a calibration is "
                              "of one model")
    return first[0]


def _measurements(report: model.Report):
    for ex in report.exercises:
        bench = ex.stage(model.StageName.BENCHMARK)
        for entry_ in (bench.details.get("measurements") or []) if bench is not None else []:
            if isinstance(entry_, dict):
                yield entry_


def _ceiling(reports: list[model.Report], prefix: str, unit: str) -> float | None:
    """A course ceiling in the runs: in each run the best valid measurement whose key starts
    with `prefix` (the largest copy is the closest to the memory's bandwidth), then the median
    over the runs; None when no run measured one."""
    per_run = []
    for report in reports:
        rates = [float(m["rate"]) for m in _measurements(report)
                 if str(m.get("key", "")).startswith(prefix) and m.get("unit") == unit
                 and m.get("valid", True) is True and _number(m.get("rate")) and m["rate"] > 0]
        if rates:
            per_run.append(max(rates))
    return _round(_median(per_run), 2)


def _profile(reports: list[model.Report], only: set[str] | None) -> dict:
    """The solutions' counters from the profile stage: {exercise: {measure: {counter: median
    over the runs}}}. The stage's rows are [{"measure", "role", "counters"}]; only the
    student's role (the solution here) is kept, not the baseline's."""
    values: dict[str, dict[str, dict[str, list[float]]]] = {}
    for report in reports:
        for ex in report.exercises:
            if only is not None and ex.name not in only:
                continue
            stage = next((s for s in ex.stages if s.name == "profile"), None)
            for row in _rows(stage.details if stage is not None else {}):
                if row.get("role") != "student" or not isinstance(row.get("counters"), dict):
                    continue
                counters = values.setdefault(ex.name, {}).setdefault(str(row.get("measure")), {})
                for counter, value in row["counters"].items():
                    if _number(value):
                        counters.setdefault(str(counter), []).append(float(value))
    return {ex: {measure: {counter: _median(vals) for counter, vals in counters.items()}
                 for measure, counters in measures.items() if counters}
            for ex, measures in values.items()}


def _rows(details) -> list[dict]:
    """The profile stage's rows (grader/stages/profile.py: details["rows"])."""
    rows = details.get("rows")
    return [r for r in rows if isinstance(r, dict) and "measure" in r and "role" in r
            and "counters" in r] if isinstance(rows, list) else []


def _date(reports: list[model.Report]) -> str:
    """The day of the latest run, as its report says; today where none says."""
    days = [r.started_at[:10] for r in reports
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", (r.started_at or "")[:10])]
    return max(days) if days else _dt.date.today().isoformat()


# ------------------------------------------------------------------------ decisions

def decide(data: dict, decisions: dict[str, str]) -> list[str]:
    """Sets each metric's decision in `data`; returns a line per change."""
    said = []
    metrics = data["metrics"]
    for key, decision in decisions.items():
        if key not in metrics:
            raise GraderError(f"--decide {key}: the calibration has no such metric; it has "
                              f"{', '.join(list(metrics)[:6]) or 'none'}"
                              + (" ..." if len(metrics) > 6 else ""))
        metric = metrics[key]
        lowered = None
        if decision == "lower":
            lowered = _lowered(metric.get("median"), data.get("margin", DEFAULT_MARGIN))
            if lowered is None:
                raise GraderError(f"--decide {key}=lower: the reference got no ratio here, so "
                                  "there is nothing to lower to; keep it or drop it")
            if lowered >= metric["full_at"]:
                raise GraderError(f"--decide {key}=lower: the reference's median less the "
                                  f"margin ({lowered:g}x) is not below full marks at "
                                  f"{metric['full_at']:g}x; keep it or drop it")
        metric["decision"] = decision
        metric["lowered_full_at"] = lowered
        said.append(f"{key}: {decision}"
                    + (f" (full marks at {_num(lowered)} instead of {_num(metric['full_at'])})"
                       if lowered is not None else ""))
    return said


def _num(value: float) -> str:
    """A threshold as notes show it: 3.0, 2.7, 0.98."""
    text = f"{value:.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def apply(exercises: list[manifest.Exercise], calibration: dict | None
          ) -> tuple[list[manifest.Exercise], list[str]]:
    """Copies of the exercises with the calibration's decisions applied, and a note for each
    threshold changed. keep: as the manifest says; lower: full marks at lowered_full_at, zero
    marks scaled by the same factor; drop: the metric is measured and earns no points."""
    metrics = (calibration or {}).get("metrics", {})
    out, notes = [], []
    for ex in exercises:
        performance = []
        for perf in ex.performance:
            key = metric_id(ex.name, perf.name)
            decided = metrics.get(key, {})
            lowered = decided.get("lowered_full_at")
            if decided.get("decision") == "drop" and perf.points > 0:
                notes.append(f"{key}: no points (dropped by calibration; it had "
                             f"{perf.points:g})")
                perf = replace(perf, points=0.0)
            elif decided.get("decision") == "lower" and _number(lowered) \
                    and 0 < lowered < perf.full_at:
                notes.append(f"{key}: full marks at {_num(lowered)} instead of "
                             f"{_num(perf.full_at)} (lowered by calibration)")
                perf = replace(perf, full_at=lowered,
                               zero_at=perf.zero_at * lowered / perf.full_at)
            performance.append(perf)
        out.append(replace(ex, performance=tuple(performance)))
    return out, notes


def for_grade(root: Path, exercises: list[manifest.Exercise], gpu: model.GpuInfo | None
              ) -> tuple[list[manifest.Exercise], dict]:
    """The exercises as this GPU's calibration decides, and the report's record of it ({}
    without a GPU to look one up for)."""
    if gpu is None or not gpu.name:
        return exercises, {}
    data, path = find(root, gpu.name)
    record = {"status": "none", "file": "", "gpu": slug(gpu.name), "applied": [],
              "flagged": []}
    if data is None:
        return exercises, record
    chosen, notes = apply(exercises, data)
    names = {ex.name for ex in exercises}
    # Flagged thresholds still in force: a lowered or dropped one is among the notes.
    flagged = [key for key, m in data["metrics"].items() if m.get("flagged")
               and m.get("decision") == "keep" and key.split("/", 1)[0] in names]
    record.update(status="found", file=relative(path, root), applied=notes, flagged=flagged)
    return chosen, record


def reference_counters(gpu_name: str, exercise: str, measure: str, *,
                       root: Path | None = None) -> tuple[dict, str]:
    """The reference solution's profiler counters for one measurement on this GPU model, and
    the calibration file's path relative to the course root; ({}, "") when there is no file
    or no entry. `exercise` is its name or chapter/name."""
    root = Path(root) if root is not None else COURSE_ROOT
    data, path = find(root, gpu_name)
    if data is None:
        return {}, ""
    counters = data.get("profile", {}).get(exercise.rsplit("/", 1)[-1], {}).get(measure)
    if not isinstance(counters, dict) or not counters:
        return {}, ""
    return dict(counters), relative(path, root)


# -------------------------------------------------------------------------- the table

def table(data: dict, keys: Iterable[str] | None = None) -> str:
    """One row per metric (those of `keys`, or all): full_at, the median ratio, the spread,
    the margin above full marks, whether it is flagged, and the decision."""
    metrics = data["metrics"]
    keys = [k for k in (keys if keys is not None else metrics) if k in metrics]
    width = max([len(k) for k in keys] + [len("exercise/metric")])
    head = (f"{'exercise/metric':<{width}} {'full_at':>8} {'median':>8} {'spread':>7} "
            f"{'margin':>8}  {'flagged':<7}  decision")
    lines = [head, "-" * len(head)]
    for key in keys:
        m = metrics[key]
        median = f"{m['median']:.3f}x" if m.get("median") is not None else "-"
        spread = f"{100 * m['spread']:.1f}%" if m.get("spread") is not None else "-"
        above = f"{100 * m['margin_above_full']:+.1f}%" \
            if m.get("margin_above_full") is not None else "-"
        decision = m["decision"] + (f" ({_num(m['lowered_full_at'])}x)"
                                    if m.get("lowered_full_at") is not None else "")
        lines.append(f"{key:<{width}} {m['full_at']:>7.3g}x {median:>8} {spread:>7} "
                     f"{above:>8}  {'yes' if m['flagged'] else 'no':<7}  {decision}")
    lines.append("-" * len(head))
    flagged = sum(bool(metrics[k]["flagged"]) for k in keys)
    lines.append(f"{flagged} of {len(keys)} thresholds flagged (the reference's worst run "
                 f"does not clear full marks by {100 * data['margin']:g}%)"
                 + ("; decide each: python3 -m grader calibrate --decide "
                    "EXERCISE/METRIC=keep|lower|drop" if flagged else ""))
    return "\n".join(lines)
