"""Views of a Report: terminal table, JSON, JUnit XML."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from enum import StrEnum
from pathlib import Path

from grader import counters, model
from grader.model import CaseStatus, ExerciseStatus, StageName, StageStatus

_COLORS = {ExerciseStatus.PASSED: "32", ExerciseStatus.PARTIAL: "33",
           ExerciseStatus.FAILED: "31", ExerciseStatus.COMPILE_ERROR: "31",
           ExerciseStatus.CRASHED: "31", ExerciseStatus.TIMED_OUT: "31",
           ExerciseStatus.EXITED_EARLY: "31", ExerciseStatus.NOT_SUBMITTED: "90",
           ExerciseStatus.SKIPPED: "90", ExerciseStatus.UNCHECKED: "33",
           ExerciseStatus.REJECTED: "31", ExerciseStatus.INCOMPLETE: "35"}
# Stages whose last lines of output show where the run stopped.
_STOPPED = (StageStatus.CRASHED, StageStatus.TIMED_OUT, StageStatus.EXITED_EARLY)
# JUnit has no "not submitted": it is reported as skipped, like a skipped case or stage.
# Not measured (the GPU stayed busy with another process) is no failure of the code.
# Not counted (a clean sanitizer run over failing cases, rules met by failing code) vouches for
# nothing and finds nothing: neither a pass nor a failure of its own.
_JUNIT_SKIPPED = (CaseStatus.SKIPPED, StageStatus.SKIPPED, StageStatus.NOT_MEASURED,
                  StageStatus.NOT_COUNTED, ExerciseStatus.NOT_SUBMITTED)


def _use_color(stream) -> bool:
    return hasattr(stream, "isatty") and stream.isatty() and "NO_COLOR" not in os.environ


def _paint(text: str, status: ExerciseStatus, color: bool) -> str:
    code = _COLORS.get(status)
    return f"\033[{code}m{text}\033[0m" if color and code else text


def _indent(text: str, prefix: str = "      ", max_lines: int = 25) -> str:
    lines = text.rstrip().splitlines()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more lines in the JSON report)"]
    return "\n".join(prefix + l for l in lines)


def terminal(report: model.Report, stream=None, verbose: bool = False) -> str:
    stream = stream or sys.stdout
    color = _use_color(stream)
    out = []
    gpu = report.gpu
    out.append(f"Submission: {report.submission}")
    out.append(f"GPU: {gpu.name} (compute capability {gpu.compute_capability}, driver "
               f"{gpu.driver})" if gpu else "GPU: none")
    if report.options.get("build_only"):
        pass  # nothing ran, so there are no inputs to replay
    elif report.options.get("secret"):
        # The inputs came from the seed and the instructor's secret: the seed alone replays
        # other inputs, so it is not offered as a way to replay these.
        out.append(f"Seed: {report.seed}   (mixed with the instructor's secret)")
    else:
        out.append(f"Seed: {report.seed}   (re-run the same inputs with --seed {report.seed})")
    hidden = [s.details["hidden"] for e in report.exercises for s in e.stages
              if "hidden" in s.details]
    if hidden:
        out.append(f"Hidden cases: {sum(h['passed'] for h in hidden)} of "
                   f"{sum(h['total'] for h in hidden)} passed (names and messages withheld)")
    out.append("")

    # Details first, for exercises that lost points; the table comes last so it is what
    # stays on screen.
    for ex in report.exercises:
        built = ex.stage(StageName.BUILD)
        warnings = built.details.get("warnings", []) if built else []
        profiled = _profiled(ex)
        if ex.status in (ExerciseStatus.PASSED, ExerciseStatus.NOT_SUBMITTED) and not verbose \
                and not warnings and profiled is None:
            continue
        technique = ex.stage(StageName.TECHNIQUE)
        if ex.status == ExerciseStatus.SKIPPED and not verbose and not warnings and not (
                technique and technique.status != StageStatus.PASSED):
            continue  # a --build-only run still shows the technique rules it broke
        label = ("compiled" if report.options.get("build_only")
                 and ex.status == ExerciseStatus.SKIPPED else ex.status.replace("_", " "))
        out.append(_paint(f"── {ex.key}: {label}", ex.status, color))
        # The profile stage has lines of its own below; when it did not run, its message is
        # said once under the table.
        shown = [s for s in ex.stages if s.name != StageName.PROFILE and (
                 verbose or s.status != StageStatus.PASSED
                 or (s.name == StageName.BUILD and s.details.get("warnings")))]
        # The exercise's message is often its failing stage's ("tests: 0 of 43 cases
        # passed"): then that stage's line says it, once.
        echoed = next((s for s in shown if _same_message(ex.message, s)), None)
        if ex.message and echoed is None:
            out.append(f"   {ex.message}")
        for stage in ex.stages:
            if stage.name == StageName.BUILD and stage.details.get("warnings"):
                out.append(f"   build: {stage.message}")
                out.append(_indent("\n".join(stage.details["warnings"])))
                continue
            if stage not in shown:
                continue
            said = echoed is None and bool(ex.message) and stage.message.rstrip(
                ":").startswith(ex.message.rstrip(":"))
            out.append(f"   {stage.name}: {stage.status.replace('_', ' ')}"
                       + (f" - {stage.message}" if stage.message and not said else ""))
            if verbose and stage.details.get("commands"):
                out.append("    commands:")
                out.append(_indent("\n".join(stage.details["commands"])))
            failed = [c for c in stage.cases if c.status != CaseStatus.PASSED]
            for case in failed[:5]:
                out.append(f"    ✗ {case.name} [{case.status}]")
                if case.message:
                    out.append(_indent(case.message, max_lines=12))
            if len(failed) > 5:
                out.append(f"    ... and {len(failed) - 5} more failing cases")
            if stage.name in (StageName.BUILD, StageName.SANITIZER) and stage.output:
                out.append(_indent(stage.output))
            elif stage.status in _STOPPED and stage.output:
                out.append("    last output:")
                out.append(_indent("\n".join(stage.output.splitlines()[-15:])))
        if profiled is not None:
            out += _profile_lines(profiled)
        out.append("")

    out += _table(report, color)
    return "\n".join(out)


def _profiled(ex: model.ExerciseResult) -> model.StageResult | None:
    """The exercise's profile stage when it ran and compared counters."""
    stage = ex.stage(StageName.PROFILE)
    if stage is None or stage.status != StageStatus.PASSED \
            or not stage.details.get("comparisons"):
        return None
    return stage


def _profile_lines(stage: model.StageResult) -> list[str]:
    """One line per comparison: the counter, yours, the reference's, the course baseline's,
    the unit, and for a worse one what it means and what to try."""
    comparisons = [c for c in stage.details.get("comparisons", []) if isinstance(c, dict)]
    several = len({c.get("measure") for c in comparisons}) > 1
    tool = stage.details.get("tool", "")
    out = [f"   profile{f' ({tool})' if tool else ''}: {stage.message}"]
    for c in comparisons:
        unit = str(c.get("unit", ""))
        values = ", ".join(f"{who} {counters.number(c.get(key), unit)}" for who, key in
                           (("yours", "student"), ("reference", "reference"),
                            ("course baseline", "baseline")))
        where = f"{c.get('measure')}: " if several else ""
        line = f"    {where}{c.get('title', c.get('counter'))}: {values} " \
               + (f"({unit})" if unit.startswith("%") else unit)
        if c.get("verdict") == "worse" and c.get("sentence"):
            line += f" - {c['sentence']}"
        out.append(line)
    if stage.details.get("problem"):
        out.append(f"    note: {stage.details['problem']}")
    return out


def _profile_notes(report: model.Report) -> list[str]:
    """Each distinct message of a profile stage that did not run (no ncu, no permission, an
    error), once, with how many exercises it concerns."""
    seen: dict[tuple[str, str], int] = {}
    for ex in report.exercises:
        stage = ex.stage(StageName.PROFILE)
        if stage is not None and stage.status != StageStatus.PASSED:
            key = (str(stage.status), stage.message)
            seen[key] = seen.get(key, 0) + 1
    return [f"PROFILE {status.upper().replace('_', ' ')}: {message}"
            + (f" ({count} exercises)" if count > 1 else "")
            for (status, message), count in seen.items()]


def _same_message(message: str, stage: model.StageResult) -> bool:
    """Whether an exercise's message only repeats the stage's: "tests: 3 of 4 cases passed"
    for the tests stage's "3 of 4 cases passed", or the stage's message itself."""
    if not message or not stage.message:
        return False
    mine = message.rstrip(":").removeprefix(f"{stage.name}: ")
    return mine == stage.message.rstrip(":")


WIDTH = 100  # the terminal output fits this many columns


def _cell(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def _table(report: model.Report, color: bool) -> list[str]:
    """One row per exercise under its chapter, within WIDTH columns. A --build-only run ran
    nothing, so it shows what compiled and the rules checked, and no score."""
    build_only = bool(report.options.get("build_only"))
    name_w = min(max([len(e.name) for e in report.exercises] + [8]), 40) + 2
    perf_w = WIDTH - name_w - 42  # the other columns and their spaces take 42
    if build_only:
        head = f"{'exercise':<{name_w}} {'status':<13} {'rules':>5}"
    else:
        head = (f"{'exercise':<{name_w}} {'status':<13} {'tests':>8} {'rules':>5} "
                f"{'perf':<{perf_w}} {'score':>11}")
    rule = "-" * len(head)
    out = [head, rule]
    chapter = None
    for ex in report.exercises:
        if ex.chapter != chapter:
            chapter = ex.chapter
            out.append(chapter)
        name = _cell("  " + ex.name, name_w)
        status_text = ("compiled" if build_only and ex.status == ExerciseStatus.SKIPPED
                       else ex.status.replace("_", " "))
        status = _paint(f"{status_text:<13}", ex.status, color)
        technique = ex.stage(StageName.TECHNIQUE)
        rules = "-"
        if technique and technique.cases:
            met = sum(c.status == CaseStatus.PASSED for c in technique.cases)
            rules = f"{met}/{len(technique.cases)}"
        elif technique:
            rules = technique.status
        if build_only:
            out.append(f"{name:<{name_w}} {status} {_cell(rules, 5):>5}")
            continue
        tests = ex.stage(StageName.TESTS)
        cases = (f"{tests.details.get('passed', 0)}/{tests.details.get('total', 0)}"
                 if tests and "total" in tests.details else "-")
        bench = ex.stage(StageName.BENCHMARK)
        perf = "-"
        if bench and bench.metrics:
            ratios = [m.ratio for m in bench.metrics if m.ratio is not None]
            perf = " ".join(f"{r:.2f}x" for r in ratios) if ratios else bench.status
        elif bench:
            perf = bench.status
        score = f"{ex.score:.1f}/{ex.max_score:.1f}"
        out.append(f"{name:<{name_w}} {status} {_cell(cases, 8):>8} {_cell(rules, 5):>5} "
                   f"{_cell(perf, perf_w):<{perf_w}} {score:>11}")
    out.append(rule)
    if build_only:
        compiled = sum(e.status == ExerciseStatus.SKIPPED for e in report.exercises)
        errors = sum(e.status == ExerciseStatus.COMPILE_ERROR for e in report.exercises)
        missing = sum(e.status == ExerciseStatus.NOT_SUBMITTED for e in report.exercises)
        out.append(f"compiled {compiled} of {len(report.exercises)} exercises"
                   + (f", {errors} with compile errors" if errors else "")
                   + (f", {missing} not submitted" if missing else "")
                   + " (--build-only: nothing ran, so there is no score)")
    else:
        total = f"{report.score:.1f}/{report.max_score:.1f} ({report.percent:.1f}%)"
        out.append(f"{'total':<{len(head) - len(total)}}{total}")
        if report.incomplete:
            out.append(f"INCOMPLETE: {len(report.incomplete)} exercise"
                       f"{'s were' if len(report.incomplete) != 1 else ' was'} not measured "
                       "because another process kept the GPU busy; their performance points "
                       "are withheld, not lost: grade again when the GPU is free")
        shared = report.sharing.get("allow_shared_gpu") and any(
            s.details.get("shared_gpu") for e in report.exercises for s in e.stages)
        if shared:
            out.append("SHARED GPU: some measurements were taken while another process used "
                       "the GPU (--allow-shared-gpu); they may be low")
        out += _profile_notes(report)
        if report.calibration.get("status") == "none" and report.gpu is not None:
            # Said once: the thresholds were set on other GPUs and may not hold on this one.
            out.append(f"no calibration for {report.gpu.name}: thresholds are the course's, "
                       "measured on the H100 and H200; python3 -m grader calibrate checks "
                       "them here")
        status = report.sandbox.get("status")
        if status and status != "on":
            out.append(f"SANDBOX {status.upper()}: student programs ran with the grader's "
                       f"rights ({report.sandbox.get('reason', '')})")
        elif report.sandbox.get("limits"):
            out.append("sandbox: on; " + "; ".join(report.sandbox["limits"]))
    return out


def report_data(report: model.Report) -> dict:
    """The JSON report's content. A --build-only run measured nothing, so its score and
    percent are null: a 0 there would read as a grade (the exercises' own statuses say
    what compiled)."""
    data = report.to_dict()
    if report.options.get("build_only"):
        data["score"] = data["percent"] = None
    return data


def write_json(report: model.Report, path: Path) -> None:
    write_atomically(path, json.dumps(report_data(report), indent=2) + "\n")


def write_atomically(path: Path, text: str) -> None:
    """Writes a whole file or nothing: a temporary file in the same folder, then a rename over
    the target, so a reader (or a second grader) never sees half a report and a failed write
    leaves the old file as it was. The temporary name is unique to this writer."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(f.fileno(), 0o666 & ~umask)  # mkstemp's 0600 would hide it from a group
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def junit_xml(report: model.Report) -> str:
    """One <testsuite> per exercise, one <testcase> per test case and per stage verdict."""
    root = ET.Element("testsuites", name="cuda-course", tests="0", failures="0")
    total = failures = 0
    for ex in report.exercises:
        suite = ET.SubElement(root, "testsuite", name=ex.key)
        count = bad = 0

        def case(name: str, status: StrEnum, message: str, seconds: float = 0.0) -> None:
            nonlocal count, bad
            element = ET.SubElement(suite, "testcase", classname=ex.key, name=name,
                                    time=f"{seconds:.3f}")
            count += 1
            if status in _JUNIT_SKIPPED:
                ET.SubElement(element, "skipped", message=message[:500])
            elif status not in (CaseStatus.PASSED, StageStatus.PASSED):
                bad += 1
                failure = ET.SubElement(element, "failure", message=message[:500] or status,
                                        type=status)
                failure.text = message
        if ex.status == ExerciseStatus.NOT_SUBMITTED:
            case("submission", ExerciseStatus.NOT_SUBMITTED, ex.message)
        for stage in ex.stages:
            if stage.cases:
                for c in stage.cases:
                    case(f"{stage.name}/{c.name}", c.status, c.message, c.duration_ms / 1000)
            else:
                detail = stage.message + ("\n" + stage.output if stage.output else "")
                # A profile that could not be taken fails nothing: it never counts.
                status = StageStatus.SKIPPED if stage.name == StageName.PROFILE \
                    and stage.status != StageStatus.PASSED else stage.status
                case(stage.name, status, detail, stage.duration_s)
        suite.set("tests", str(count))
        suite.set("failures", str(bad))
        total += count
        failures += bad
    root.set("tests", str(total))
    root.set("failures", str(failures))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"
