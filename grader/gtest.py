"""Reading GoogleTest results: the case list, and the course's result stream.

The test main (support/src/gpu_test_main.cpp) streams one JSON line per case start and end to
COURSE_EVENTS, and a "finished" line after the last case; every line carries the run's nonce
(support/include/course/results.h), which only the course's harness knows. Those lines are the
only results the grader reads: GoogleTest's own report, the program's output and lines without
the nonce are never taken as results, so a submission cannot write its own. From the stream
the grader also recovers the finished cases and the one that was running when the process died,
or that the test main stopped because it ran past the manifest's case_timeout_s. A failed
case's "end" line says what kind of failure it was (model.FailureKind), so the pipeline never
reads a message's wording to decide whether the neighbours could have caused it.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path

from grader.model import CaseStatus, FailureKind


@dataclass
class CaseOutcome:
    name: str
    status: CaseStatus
    message: str = ""
    duration_ms: float = 0.0
    failure_kinds: set[FailureKind] = field(default_factory=set)


@dataclass
class RunOutcome:
    cases: dict[str, CaseOutcome] = field(default_factory=dict)
    running: str | None = None      # started but never finished
    finished: bool = False          # the harness's "finished" line: every case ran
    forged: int = 0                 # result lines without this run's nonce, ignored
    stopped: str | None = None      # the case the test main stopped at its time limit
    stop_limit_s: float = 0.0
    # Kernels the run launched from the host (support/src/launch_record.cpp), as
    # cudaFuncGetName names them.
    launched: set[str] = field(default_factory=set)


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


def split_filter(gtest_filter: str) -> tuple[list[str], list[str]]:
    """GoogleTest's filter syntax: POSITIVE[-NEGATIVE], each ':'-separated; the first '-'
    starts the negative part, and an empty positive part means '*'."""
    positive, _, negative = gtest_filter.partition("-")
    return ([p for p in positive.split(":") if p] or ["*"],
            [p for p in negative.split(":") if p])


def selects(gtest_filter: str, case: str) -> bool:
    """Whether --gtest_filter=gtest_filter runs `case` ("Suite.Name", "Prefix/Suite.Name/p")."""
    positive, negative = split_filter(gtest_filter)
    return (any(fnmatch.fnmatchcase(case, p) for p in positive)
            and not any(fnmatch.fnmatchcase(case, p) for p in negative))


def parse_events(path: Path, nonce: str | None = None) -> RunOutcome:
    """The COURSE_EVENTS stream; tolerates a torn last line from a killed process. With a
    nonce, a line that does not carry it is counted as forged and otherwise ignored."""
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
        if not isinstance(event, dict):
            continue
        if nonce is not None and event.get("nonce") != nonce:
            outcome.forged += 1
            continue
        name = str(event.get("case", ""))
        if event.get("event") == "start":
            outcome.running = name
        elif event.get("event") == "end":
            failures = event.get("failures", [])
            outcome.cases[name] = CaseOutcome(
                name, _event_status(event),
                "\n".join(map(str, failures)) if isinstance(failures, list) else "",
                _number(event.get("ms", 0)), _failure_kinds(event.get("failure_kinds")))
            if outcome.running == name:
                outcome.running = None
        elif event.get("event") == "stopped":
            outcome.stopped = name
            outcome.stop_limit_s = _number(event.get("limit_s", 0))
            outcome.running = None
        elif event.get("event") == "finished":
            outcome.finished = outcome.running is None
        elif event.get("event") == "launched" and isinstance(event.get("kernels"), list):
            outcome.launched.update(str(k) for k in event["kernels"])
    return outcome


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else 0.0


def _failure_kinds(value) -> set[FailureKind]:
    """The kinds the test main named; one this grader does not know is no kind."""
    if not isinstance(value, list):
        return set()
    return {FailureKind(v) for v in value if v in FailureKind.__members__.values()}


def _event_status(event: dict) -> CaseStatus:
    """The test main writes passed, failed or skipped; anything else is no pass."""
    try:
        return CaseStatus(event.get("status", CaseStatus.FAILED))
    except ValueError:
        return CaseStatus.FAILED
