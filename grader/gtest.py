"""Reading GoogleTest results: the case list, the JSON report, and the course's event stream.

GoogleTest writes its JSON report only when the whole run ends, so a crash, a hang or an early
exit() leaves none. The test main (support/src/gpu_test_main.cpp) also streams one JSON line
per case start and end to COURSE_EVENTS; from it the grader recovers the finished cases and
names the one that was running when the process died.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.model import CaseStatus


@dataclass
class CaseOutcome:
    name: str
    status: CaseStatus
    message: str = ""
    duration_ms: float = 0.0


@dataclass
class RunOutcome:
    cases: dict[str, CaseOutcome] = field(default_factory=dict)
    running: str | None = None      # started but never finished
    complete_report: bool = False   # GoogleTest's own JSON report was written


def parse_list(output: str) -> list[str]:
    """Case names from --gtest_list_tests output ("Suite." lines, then indented names)."""
    names: list[str] = []
    suite = None
    for raw in output.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not raw.startswith(" "):
            suite = line.strip() if line.strip().endswith(".") else None
        elif suite is not None:
            names.append(suite + line.strip())
    return names


def _seconds(text) -> float:
    if isinstance(text, (int, float)):
        return float(text)
    match = re.match(r"([\d.]+)s?$", str(text).strip())
    return float(match.group(1)) if match else 0.0


def parse_report(path: Path) -> dict[str, CaseOutcome]:
    """GoogleTest's --gtest_output=json report. Raises ValueError if it is not one."""
    data = json.loads(Path(path).read_text(encoding="utf-8", errors="replace"))
    if not isinstance(data, dict) or "testsuites" not in data:
        raise ValueError("no 'testsuites' in the report")
    cases: dict[str, CaseOutcome] = {}
    for suite in data["testsuites"]:
        for case in suite.get("testsuite", []):
            name = f"{suite['name']}.{case['name']}"
            failures = [f.get("failure", "") for f in case.get("failures", [])]
            if case.get("status") == "NOTRUN" or case.get("result") == "SUPPRESSED":
                continue  # filtered out or disabled: not part of this run
            if case.get("result") == "SKIPPED":
                status = CaseStatus.SKIPPED
            else:
                status = CaseStatus.FAILED if failures else CaseStatus.PASSED
            cases[name] = CaseOutcome(name, status, "\n".join(failures),
                                      _seconds(case.get("time", 0)) * 1000.0)
    return cases


def parse_events(path: Path) -> RunOutcome:
    """The COURSE_EVENTS stream; tolerates a torn last line from a killed process."""
    outcome = RunOutcome()
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return outcome
    for line in lines:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        name = event.get("case", "")
        if event.get("event") == "start":
            outcome.running = name
        elif event.get("event") == "end":
            outcome.cases[name] = CaseOutcome(name, _event_status(event),
                                              "\n".join(event.get("failures", [])),
                                              float(event.get("ms", 0)))
            if outcome.running == name:
                outcome.running = None
    return outcome


def _event_status(event: dict) -> CaseStatus:
    """The test main writes passed, failed or skipped; anything else is no pass."""
    try:
        return CaseStatus(event.get("status", CaseStatus.FAILED))
    except ValueError:
        return CaseStatus.FAILED


def collect(report: Path, events: Path) -> RunOutcome:
    """Prefer GoogleTest's report; fall back to the event stream when there is none."""
    streamed = parse_events(events)
    if Path(report).is_file():
        try:
            cases = parse_report(report)
            return RunOutcome(cases=cases, running=None, complete_report=True)
        except (ValueError, KeyError, TypeError, AttributeError, json.JSONDecodeError):
            pass
    return streamed
