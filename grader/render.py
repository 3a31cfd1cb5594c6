"""Views of a Report: terminal table, JSON, JUnit XML."""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from enum import StrEnum
from pathlib import Path

from grader import model
from grader.model import CaseStatus, ExerciseStatus, StageStatus

_COLORS = {ExerciseStatus.PASSED: "32", ExerciseStatus.PARTIAL: "33",
           ExerciseStatus.FAILED: "31", ExerciseStatus.COMPILE_ERROR: "31",
           ExerciseStatus.CRASHED: "31", ExerciseStatus.TIMED_OUT: "31",
           ExerciseStatus.EXITED_EARLY: "31", ExerciseStatus.NOT_SUBMITTED: "90",
           ExerciseStatus.SKIPPED: "90"}
# Stages whose last lines of output show where the run stopped.
_STOPPED = (StageStatus.CRASHED, StageStatus.TIMED_OUT, StageStatus.EXITED_EARLY)
# JUnit has no "not submitted": it is reported as skipped, like a skipped case or stage.
_JUNIT_SKIPPED = (CaseStatus.SKIPPED, StageStatus.SKIPPED, ExerciseStatus.NOT_SUBMITTED)


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
    if report.options.get("secret"):
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
        if ex.status in (ExerciseStatus.PASSED, ExerciseStatus.NOT_SUBMITTED) and not verbose:
            continue
        technique = ex.stage("technique")
        if ex.status == ExerciseStatus.SKIPPED and not verbose and not (
                technique and technique.status != StageStatus.PASSED):
            continue  # a --build-only run still shows the technique rules it broke
        out.append(_paint(f"── {ex.key}: {ex.status.replace('_', ' ')}", ex.status, color))
        if ex.message:
            out.append(f"   {ex.message}")
        for stage in ex.stages:
            if stage.status == StageStatus.PASSED and not verbose:
                continue
            out.append(f"   {stage.name}: {stage.status}"
                       + (f" - {stage.message}" if stage.message else ""))
            failed = [c for c in stage.cases if c.status != CaseStatus.PASSED]
            for case in failed[:5]:
                out.append(f"    ✗ {case.name} [{case.status}]")
                if case.message:
                    out.append(_indent(case.message, max_lines=12))
            if len(failed) > 5:
                out.append(f"    ... and {len(failed) - 5} more failing cases")
            if stage.name in ("build", "sanitizer") and stage.output:
                out.append(_indent(stage.output))
            elif stage.status in _STOPPED and stage.output:
                out.append("    last output:")
                out.append(_indent("\n".join(stage.output.splitlines()[-15:])))
        out.append("")

    width = max([len(e.key) for e in report.exercises] + [8])
    out.append(f"{'exercise':<{width}}  {'status':<14} {'tests':>8} {'rules':>6} {'perf':>16} "
               f"{'score':>13}")
    out.append("-" * (width + 63))
    for ex in report.exercises:
        tests = ex.stage("tests")
        cases = (f"{tests.details.get('passed', 0)}/{tests.details.get('total', 0)}"
                 if tests and "total" in tests.details else "-")
        bench = ex.stage("benchmark")
        perf = "-"
        if bench and bench.metrics:
            ratios = [m.ratio for m in bench.metrics if m.ratio is not None]
            perf = ", ".join(f"{r:.2f}x" for r in ratios) if ratios else bench.status
        elif bench:
            perf = bench.status
        technique = ex.stage("technique")
        rules = "-"
        if technique and technique.cases:
            met = sum(c.status == CaseStatus.PASSED for c in technique.cases)
            rules = f"{met}/{len(technique.cases)}"
        elif technique:
            rules = technique.status
        status = _paint(f"{ex.status.replace('_', ' '):<14}", ex.status, color)
        out.append(f"{ex.key:<{width}}  {status} {cases:>8} {rules:>6} {perf:>16} "
                   f"{ex.score:>6.1f}/{ex.max_score:<6.1f}")
    out.append("-" * (width + 63))
    out.append(f"{'total':<{width}}  {'':<14} {'':>8} {'':>6} {'':>16} "
               f"{report.score:>6.1f}/{report.max_score:<6.1f} ({report.percent:.1f}%)")
    return "\n".join(out)


def write_json(report: model.Report, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


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
                case(stage.name, stage.status, detail, stage.duration_s)
        suite.set("tests", str(count))
        suite.set("failures", str(bad))
        total += count
        failures += bad
    root.set("tests", str(total))
    root.set("failures", str(failures))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"
