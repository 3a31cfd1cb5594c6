"""The profile stage (grade --profile): the exercise's timed kernels under Nsight Compute.

After the benchmark, the bench runs again under `ncu` once per measurement of the exercise's
[[performance]] criteria (each `measure`, the student's, and each `baseline`, the course's): the
bench's --profile mode runs every measurement once, untimed, inside an NVTX push/pop range named
after it (support/src/bench.cu), and ncu's NVTX filter profiles only the kernels of that range.
ncu collects the metrics of the counters the manifest's `[profile]` names (grader/counters.py)
and the roofline's; per range they are aggregated over its kernels, turned into counters and
compared with the reference solution's (a calibration file of this GPU model,
grader/calibration.py) and the baseline's. Each comparison gets a verdict and a sentence.

ncu runs inside the run's sandbox like the bench itself, with its install folder readable and
its temporary files in the run's scratch folder. The stage never awards points and never fails
the grade: without ncu, or without the right to read the GPU's counters, it is skipped with one
line; an ncu that fails otherwise is an error of the stage, with its output clipped.
"""

from __future__ import annotations

import csv
import dataclasses
import glob
import os
import shutil
import time
from pathlib import Path

from grader import counters as registry
from grader import proc
from grader.manifest import Exercise
from grader.model import ProfileDetails, StageName, StageResult, StageStatus
from grader.stages.common import (NO_GPU_EXIT, GradeOptions, clip, run_reporting,
                                  student_scratch)

NCU_ENV = "COURSE_NCU"  # an ncu to use instead of the one found (tests' stand-in, a new one)
LAUNCH_COUNT = 64       # kernels profiled per range at most
MARKER = "profile_range_marker"  # the bench's first kernel in each range (support/src/bench.cu)
# ncu prints its CSV after the program's own output; the whole of it is kept, within reason.
OUTPUT_LIMIT = 8 * 1024 * 1024
VERSION_TIMEOUT_S = 60
PERMISSION_ERROR = "ERR_NVGPUCTRPERM"
NO_KERNELS = "No kernels were profiled"  # ncu's warning, with no CSV after it
NOT_PERMITTED = ("profiling counters are not permitted for this user (ERR_NVGPUCTRPERM): run "
                 "the grader as root, or set the nvidia driver option "
                 "NVreg_RestrictProfilingToAdminUsers=0 (see NVIDIA's ERR_NVGPUCTRPERM page)")
NOT_FOUND = ("ncu (Nsight Compute) not found on PATH, in $CUDA_HOME/bin, /usr/local/cuda/bin "
             f"or /opt/nvidia/nsight-compute; install it or name it with {NCU_ENV} to profile")
# Units ncu may print despite --print-units base, and their factor to the base unit.
_SCALE = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9,
          "nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9,
          "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
          "KB": 1e3, "MB": 1e6, "GB": 1e9}


def find_ncu() -> str | None:
    """The ncu to run: $COURSE_NCU as it is, else the first found on PATH, in $CUDA_HOME/bin,
    /usr/local/cuda/bin, then the newest of /opt/nvidia/nsight-compute/*/ncu; a toolkit's
    bin/ncu, a wrapper script, is replaced by the install it runs (real_ncu)."""
    named = os.environ.get(NCU_ENV)
    if named:
        return named if os.access(named, os.X_OK) else None
    candidates = [shutil.which("ncu")]
    if os.environ.get("CUDA_HOME"):
        candidates.append(str(Path(os.environ["CUDA_HOME"]) / "bin" / "ncu"))
    candidates.append("/usr/local/cuda/bin/ncu")
    candidates += sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), key=_version_key,
                         reverse=True)
    found = next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)),
                 None)
    return real_ncu(found) if found else None


def _version_key(path: str) -> tuple:
    """Sorts install folders by the version in their name (2025.3.1 after 2025.10.0 is wrong
    as text)."""
    digits = "".join(c if c.isdigit() else " " for c in Path(path).parent.name)
    return tuple(int(part) for part in digits.split())


def real_ncu(found: str) -> str:
    """The ncu of the Nsight Compute install that a toolkit's bin/ncu wrapper script runs: the
    wrapper looks for the install itself, in folders the sandbox does not open, so the grader
    runs the install's own ncu and opens its folder. Anything else is returned as it is."""
    try:
        with open(found, "rb") as f:
            head = f.read(64 * 1024)
    except OSError:
        return found
    if not head.startswith(b"#!") or b"nsight-compute" not in head:
        return found
    toolkit = Path(found).resolve().parent.parent
    installs = glob.glob(str(toolkit / "nsight-compute-*" / "ncu")) \
        + glob.glob("/opt/nvidia/nsight-compute/*/ncu") \
        + glob.glob("/opt/nvidia/nsight-compute-*/ncu")
    installs = [p for p in installs if os.access(p, os.X_OK)]
    return max(installs, key=_version_key) if installs else found


def install_folder(ncu: str) -> str:
    """The folder the sandbox must let ncu read: the install its binary lies in (its
    libraries, sections and target folders beside it), the toolkit's root for a toolkit's
    bin/ncu."""
    folder = Path(ncu).resolve().parent
    return str(folder.parent if folder.name == "bin" else folder)


def version(ncu: str) -> str:
    """ncu --version's version line ("Version 2025.3.0.0 (build ...)"), or its last line."""
    result = proc.run([ncu, "--version"], VERSION_TIMEOUT_S, output_limit=16 * 1024)
    lines = [line.strip() for line in result.output.splitlines() if line.strip()]
    return next((line for line in lines if line.lower().startswith("version")),
                lines[-1] if lines else "")


def targets(ex: Exercise) -> list[tuple[str, str, str]]:
    """(name, role, baseline) of each measurement to profile, each once, in the manifest's
    order: every criterion's measure ("student", with the baseline of its first criterion),
    then its baseline ("baseline")."""
    out: dict[str, tuple[str, str, str]] = {}
    for perf in ex.performance:
        out.setdefault(perf.measure, (perf.measure, "student", perf.baseline))
        out.setdefault(perf.baseline, (perf.baseline, "baseline", ""))
    return list(out.values())


def command(ncu: str, binary: Path, names: list[str], metrics: tuple[str, ...],
            out: Path) -> list[str]:
    """ncu on the bench's --profile run, profiling the kernels of the named NVTX ranges only."""
    ranges = [arg for name in names for arg in ("--nvtx-include", f"{name}/")]
    return [ncu, "--nvtx", *ranges, "--metrics", ",".join(metrics),
            "--csv", "--page", "raw", "--print-units", "base",
            "--launch-count", str(LAUNCH_COUNT * max(1, len(names))),
            str(binary), "--profile", "--ceilings-elsewhere", "--json", str(out)]


def split_ranges(kernels: list[dict], ranges: list[str], wanted: set[str]) \
        -> dict[str, list[dict]] | None:
    """The kernels of each wanted range. ncu lists kernels in launch order, and the bench
    launches MARKER first in each range, in the order of its "profile_ranges": so the n-th
    marker starts the n-th wanted range. None when that cannot be (a kernel before any marker,
    more markers than ranges); ranges past the launch count's cut are left out."""
    order = [name for name in ranges if name in wanted]
    groups: list[list[dict]] = []
    for k in kernels:
        if MARKER in k["kernel"]:
            groups.append([])
        elif not groups:
            return None
        else:
            groups[-1].append(k)
    if len(groups) > len(order):
        return None
    out: dict[str, list[dict]] = {}
    for name, group in zip(order, groups):
        out.setdefault(name, []).extend(group)
    return out


# ------------------------------------------------------------------------ ncu's CSV

def number(text: str, unit: str = "") -> float | None:
    """A value of ncu's CSV in its base unit: thousands separators dropped, "n/a" or empty
    is None."""
    text = text.strip().replace(",", "")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value * _SCALE.get(unit.strip(), 1.0)


def _fields(line: str) -> list[str]:
    return next(csv.reader([line]), [])


def parse(output: str) -> list[dict] | None:
    """The kernels ncu reported, each {"kernel": name, "values": {metric: value or None}},
    from its --csv output: the raw page (a header row, a units row, one row per kernel) or the
    details page (one row per kernel and metric). Lines before the header (==PROF==, warnings,
    the program's own output) and after the rows are passed over; where a header appears more
    than once, the last is ncu's (printed after the program ended). None without a header."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines)
              if line.lstrip().startswith('"ID"') and "Kernel Name" in line]
    if not starts:
        return None
    header = _fields(lines[starts[-1]].strip())
    rows = []
    for line in lines[starts[-1] + 1:]:
        line = line.strip()
        if not line.startswith('"'):
            continue  # ==PROF==, ==WARNING==, the program's output
        fields = _fields(line)
        if len(fields) == len(header):
            rows.append(dict(zip(header, fields)))
    if "Metric Name" in header and "Metric Value" in header:
        return _long_rows(rows)
    units = next((r for r in rows if not r.get("ID", "").strip()), {})
    metrics = [h for h in header if "__" in h]
    kernels = []
    for row in rows:
        if not row.get("ID", "").strip().isdigit():
            continue
        kernels.append({"kernel": row.get("Kernel Name", ""),
                        "values": {m: number(row[m], units.get(m, "")) for m in metrics}})
    return kernels


def _long_rows(rows: list[dict]) -> list[dict]:
    """The details page's rows (one per kernel and metric), one entry per kernel."""
    kernels: dict[str, dict] = {}
    for row in rows:
        kernel = kernels.setdefault(row.get("ID", ""), {"kernel": row.get("Kernel Name", ""),
                                                         "values": {}})
        kernel["values"][row.get("Metric Name", "")] = number(row.get("Metric Value", ""),
                                                              row.get("Metric Unit", ""))
    return list(kernels.values())


# ------------------------------------------------------------------------ the stage

@dataclasses.dataclass
class _Range:
    """What one ncu run found for one NVTX range."""
    row: dict | None = None      # the report's row; None when nothing could be read
    status: StageStatus = StageStatus.PASSED
    message: str = ""            # why the stage ends here (skipped, error)
    problem: str = ""            # a note that does not end the stage
    output: str = ""


def run(options: GradeOptions, ex: Exercise, binary: Path, gpu_name: str = "") -> StageResult:
    """Profiles every measurement of the exercise's criteria and compares its counters."""
    started = time.monotonic()
    details = ProfileDetails()
    stage = StageResult(StageName.PROFILE, StageStatus.PASSED, details=details)

    def done() -> StageResult:
        stage.duration_s = round(time.monotonic() - started, 2)
        details.added_s = stage.duration_s
        return stage

    ncu = find_ncu()
    if ncu is None:
        stage.status, stage.message = StageStatus.SKIPPED, NOT_FOUND
        return done()
    details.tool = version(ncu)
    reference_from = ""
    metrics = registry.metrics_for(ex.profile_counters)
    readable = dataclasses.replace(options.sandbox, readable=(*options.sandbox.readable,
                                                              install_folder(ncu)),
                                   profiler=True)
    run_options = dataclasses.replace(options, sandbox=readable, output_limit=OUTPUT_LIMIT)
    rows, problems = [], []
    for found in _profile_ranges(run_options, ex, ncu, binary, metrics):
        if found.problem:
            problems.append(found.problem)
        if found.status != StageStatus.PASSED:
            stage.status, stage.message = found.status, found.message
            stage.output = clip(found.output, 4096)
            break
        rows.append(found.row)
    details.rows = rows
    comparisons = []
    if stage.status == StageStatus.PASSED:
        comparisons, reference_from = compare(ex, rows, gpu_name)
        stage.message = summary(comparisons)
    details.reference_from = reference_from
    details.comparisons = comparisons
    details.problem = "; ".join(problems)
    return done()


def _profile_ranges(options: GradeOptions, ex: Exercise, ncu: str, binary: Path,
                    metrics: tuple[str, ...]) -> list[_Range]:
    """One ncu run of the bench for every measurement to profile; a _Range each, or one that
    ends the stage."""
    wanted = targets(ex)
    names = [name for name, _, _ in wanted]
    scratch = student_scratch(options, ex, StageName.PROFILE)
    out = scratch / "profile.json"
    result, data, nonce = run_reporting(options, command(ncu, binary, names, metrics, out), out,
                                        scratch / "nonce", ex.benchmark_timeout_s + 120,
                                        scratch=scratch)
    text = result.output
    if PERMISSION_ERROR in text:
        return [_Range(status=StageStatus.SKIPPED, message=NOT_PERMITTED)]
    if result.returncode == NO_GPU_EXIT:
        return [_Range(status=StageStatus.SKIPPED, message="no GPU available to profile")]
    # ncu's own verdict over any CSV the program printed: ranges with nothing it can see
    # (work the bench times by hand).
    kernels = [] if NO_KERNELS in text and result.returncode == 0 else parse(text)
    if kernels is None:
        why = result.describe_exit() if result.returncode != 0 or result.start_error \
            else "printed no CSV"
        return [_Range(status=StageStatus.ERROR, output=text,
                       message=f"ncu {why} while profiling {', '.join(names)} (its output is "
                               "in the report)")]
    report_ok = (isinstance(data, dict) and data.get("completed") is True
                 and data.get("nonce") == nonce and data.get("profile") is True)
    ranges = [r for r in data.get("profile_ranges", []) if isinstance(r, str)] \
        if report_ok else []
    by_range = split_ranges(kernels, ranges, set(names)) if report_ok else None
    if by_range is None:
        why = (f"the bench's profile run {result.describe_exit()} without its report"
               if not report_ok else "ncu's kernels do not line up with the bench's ranges")
        return [_Range(status=StageStatus.ERROR, output=text,
                       message=f"the profile of {ex.key} cannot be read: {why}")]
    entries = {m.get("name"): m for m in data.get("measurements", []) if isinstance(m, dict)}
    found = []
    for name, role, _baseline in wanted:
        problems = []
        entry = entries.get(name)
        if entry is None:
            problems.append("the bench has no such measurement")
        elif not entry.get("valid", True):
            problems.append(str(entry.get("problem") or "invalid"))
        if name not in by_range and name in ranges \
                and len(kernels) >= LAUNCH_COUNT * len(names):
            problems.append(f"not profiled: past the first {LAUNCH_COUNT * len(names)} "
                            "kernels")
        in_range = by_range.get(name, [])
        if not in_range and not problems:
            problems.append("no kernel ran in its NVTX range (the bench times it by hand, or "
                            "it launches none)")
        if len(in_range) >= LAUNCH_COUNT:
            problems.append(f"{len(in_range)} kernels profiled in its range")
        values = registry.aggregate([k["values"] for k in in_range])
        row = {"measure": name, "role": role,
               "kernels": list(dict.fromkeys(k["kernel"] for k in in_range)),
               "launches": len(in_range),
               "counters": registry.compute(ex.profile_counters, values) if in_range else
               {c: None for c in ex.profile_counters},
               "roofline": registry.roofline(values)}
        found.append(_Range(row=row, problem=f"{name}: {'; '.join(problems)}" if problems
                            else ""))
    return found


def reference(gpu_name: str, ex: Exercise, measure: str) -> tuple[dict, str]:
    """The reference solution's counters for `measure` on this GPU model and the calibration
    file they come from; ({}, "") where there are none (or no calibration module)."""
    try:
        from grader import calibration
        found, path = calibration.reference_counters(gpu_name, ex.name, measure)
    except (ImportError, AttributeError):
        return {}, ""
    return (found if isinstance(found, dict) else {}), str(path or "")


def compare(ex: Exercise, rows: list[dict], gpu_name: str) -> tuple[list[dict], str]:
    """One comparison per student measure and counter, and the calibration file used."""
    by_name = {row["measure"]: row for row in rows}
    used = ""
    out = []
    for name, role, baseline in targets(ex):
        if role != "student" or name not in by_name:
            continue
        ref, path = reference(gpu_name, ex, name) if gpu_name else ({}, "")
        used = used or path
        base = by_name.get(baseline, {}).get("counters", {})
        for counter_name in ex.profile_counters:
            counter = registry.COUNTERS[counter_name]
            student = by_name[name]["counters"].get(counter_name)
            ref_value = _float(ref.get(counter_name))
            base_value = _float(base.get(counter_name))
            other, against = (ref_value, "the reference") if ref_value is not None \
                else (base_value, "the course baseline")
            verdict = registry.verdict(counter, student, other)
            out.append({"measure": name, "counter": counter_name, "title": counter.title,
                        "unit": counter.unit, "student": student, "reference": ref_value,
                        "baseline": base_value, "better": counter.better, "verdict": verdict,
                        "sentence": registry.sentence(counter, verdict, student, other,
                                                      against)})
    return out, used


def _float(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def summary(comparisons: list[dict]) -> str:
    """The stage's one line: how many counters are worse than what they were compared with."""
    if not comparisons:
        return "nothing to compare"
    worse = sum(c["verdict"] == "worse" for c in comparisons)
    known = sum(c["verdict"] != "unknown" for c in comparisons)
    return (f"{len(comparisons)} counters compared, {worse} worse than the reference or "
            f"baseline" + ("" if known == len(comparisons)
                           else f", {len(comparisons) - known} without a value to compare"))
