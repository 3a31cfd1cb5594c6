"""The sanitizer stage: the manifest's compute-sanitizer tools (memcheck always) over the small
test cases its filter selects, each run classified like the tests stage, then its summaries read.
Cases failing without sanitizer errors are the tests stage's business, not this one's. The
failure kinds its runs' cases reported travel with the stage (SanitizerDetails), so a run that
ran out of memory among other exercises is run again alone like the tests'."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader import tools
from grader.manifest import Exercise
from grader.model import CaseStatus, FailureKind, StageName, StageResult, StageStatus
from grader.stages import tests
from grader.stages.common import GradeOptions, clip

SANITIZER_EXIT = 86  # --error-exitcode: tells "found errors" from the tests' own failures

_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+error")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY:.*?\((\d+)\s+error")
# A tool that refuses what the program does (racecheck, synccheck and initcheck refuse CUDA
# dynamic parallelism, measured with CUDA 13.0) warns and exits with the error code.
_UNSUPPORTED = re.compile(r"Warning: (.*? is not supported by the selected tool)")
_LEAK_SUMMARY = re.compile(r"LEAK SUMMARY:\s*(\d+)\s+bytes leaked in\s+(\d+)\s+allocation")
# The tool's own lines saying that it ran out of memory (not the harness's: the tool's
# wording is the only record of it).
_TOOL_OUT_OF_MEMORY = re.compile(r"^=========.*out of memory", re.IGNORECASE | re.MULTILINE)


def run(options: GradeOptions, ex: Exercise, binary: Path,
        cancel: threading.Event | None = None) -> StageResult:
    """The stage; setting `cancel` ends its runs early (a run started beside the tests, not
    needed once they timed out), and the result is then to be discarded."""
    sanitizer = tools.find("compute-sanitizer")
    stage = StageResult(StageName.SANITIZER, StageStatus.PASSED)
    if sanitizer is None:
        # Not a skip: unchecked code must not earn correctness points silently.
        stage.status = StageStatus.ERROR
        stage.message = ("compute-sanitizer not found, so the memory checks could not run "
                         "(it comes with the CUDA toolkit; --no-sanitizer skips them knowingly)")
        return stage
    messages: list[str] = []
    at_once = max(1, min(options.sanitizer_tools_at_once, len(ex.sanitizer_tools)))
    if at_once == 1:
        # One tool after another, stopping at the first that fails: one failing tool is
        # enough to void correctness.
        for tool in ex.sanitizer_tools:
            sub = _run_tool(options, ex, binary, sanitizer, tool, cancel)
            stage.duration_s = round(stage.duration_s + sub.duration_s, 2)
            if not _judge(stage, ex, tool, sub, messages):
                break
    else:
        # Cores to spare (a few exercises graded, a student's re-grade): every tool at once,
        # each in its own scratch folder, judged in the manifest's order as above.
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="sanitizer") as pool:
            runs = [pool.submit(_run_tool, options, ex, binary, sanitizer, tool, cancel)
                    for tool in ex.sanitizer_tools]
            subs = [r.result() for r in runs]
        stage.duration_s = round(time.monotonic() - started, 2)
        for tool, sub in zip(ex.sanitizer_tools, subs):
            if not _judge(stage, ex, tool, sub, messages):
                break
    if stage.status in (StageStatus.PASSED, StageStatus.FAILED):
        stage.message = "; ".join(messages)
    return stage


def tool_command(sanitizer: str, tool: str, leaks: bool = False) -> list[str]:
    """compute-sanitizer running `tool` as this stage runs it, before the program's command."""
    return [sanitizer, "--tool", tool, *(["--leak-check", "full"] if leaks else []),
            "--error-exitcode", str(SANITIZER_EXIT),
            "--print-limit", "20", "--report-api-errors", "no"]


def _run_tool(options: GradeOptions, ex: Exercise, binary: Path, sanitizer: str,
              tool: str, cancel: threading.Event | None = None) -> StageResult:
    """The filtered small cases under one compute-sanitizer tool."""
    # Failed API calls are the tests' business (some exercises fail them on purpose); the
    # sanitizer is here for memory errors, races and barriers. Leaks are found when the
    # context is destroyed: the test main resets the device after the last case when
    # COURSE_LEAK_CHECK is set.
    leaks = tool == "memcheck" and ex.sanitizer_leak_check
    return tests.run(options, ex, binary, stage_name=f"sanitizer-{tool}",
                     gtest_filter=ex.sanitizer_filter_for(tool),
                     wrapper=tool_command(sanitizer, tool, leaks),
                     timeout_s=ex.sanitizer_timeout_s,
                     extra_env={"COURSE_LEAK_CHECK": "1"} if leaks else None, cancel=cancel)


def _judge(stage: StageResult, ex: Exercise, tool: str, sub: StageResult,
           messages: list[str]) -> bool:
    """Folds one tool's run into the stage; False when the stage is decided (a finding, a
    skip, a tool that could not check), so later tools say nothing more."""
    stage.details.failure_kinds |= getattr(sub.details, "failure_kinds", set())
    if _TOOL_OUT_OF_MEMORY.search(sub.output):
        stage.details.failure_kinds.add(FailureKind.OUT_OF_MEMORY)
    errors = error_count(sub.output)
    found = errors > 0 or sub.details.get("exit") == f"exit status {SANITIZER_EXIT}"
    if sub.status == StageStatus.SKIPPED:
        stage.status = StageStatus.SKIPPED
        stage.message = sub.message
        return False
    if "Device not supported" in sub.output:
        stage.status = StageStatus.ERROR
        stage.message = f"compute-sanitizer cannot run on this device ({tool})"
        stage.output = clip(sub.output)
        return False
    unsupported = _UNSUPPORTED.search(sub.output)
    if unsupported:
        stage.status = StageStatus.ERROR
        stage.message = (f"{tool} could not check this program: {unsupported.group(1)} "
                         f"(a course bug, not yours: the manifest should not ask for {tool})")
        stage.output = clip(findings(sub.output))
        return False
    if not found and not sub.cases:
        stage.status = StageStatus.ERROR
        stage.message = (f"{tool}'s sanitizer filter {ex.sanitizer_filter_for(tool)!r} selects "
                         "no test case: nothing was checked (a course bug, not yours)")
        return False
    if not found and sub.status in (StageStatus.PASSED, StageStatus.FAILED):
        failed = sum(c.status != CaseStatus.PASSED for c in sub.cases)
        messages.append(f"{tool}: clean" + (f" ({failed} cases failed under it)"
                                            if failed else ""))
        return True
    stage.status = StageStatus.FAILED
    if found:
        count = f"{errors} error{'s' if errors != 1 else ''}" if errors else "errors"
        leaked = _LEAK_SUMMARY.search(sub.output)
        messages.append(f"{tool} found {count}" + (
            f" ({leaked.group(1)} bytes of device memory never freed, in "
            f"{leaked.group(2)} allocations)" if leaked else ""))
    elif sub.status == StageStatus.TIMED_OUT:
        messages.append(f"{tool}: {sub.message}")
    else:
        messages.append(f"{tool}: tests failed or crashed under the sanitizer "
                        f"({sub.message})")
    stage.output = clip(findings(sub.output))
    return False


def error_count(output: str) -> int:
    """The largest error count in compute-sanitizer's summaries (0 when there is none)."""
    counts = [int(m.group(1)) for m in _ERROR_SUMMARY.finditer(output)]
    counts += [int(m.group(1)) for m in _RACE_SUMMARY.finditer(output)]
    return max(counts, default=0)


def findings(output: str) -> str:
    """The sanitizer's own lines (prefixed =========), which say what and where."""
    lines = [l for l in output.splitlines() if l.startswith("=========")]
    return "\n".join(lines[:80]) if lines else output
