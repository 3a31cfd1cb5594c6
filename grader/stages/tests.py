"""The tests stage: runs a GoogleTest binary and classifies the run.

The binary runs in its own process group with the manifest's time limit and bounded output.
Per-case results come from GoogleTest's JSON report or, when the process died first, from the
course's event stream (grader.gtest), which names the case that was running. A time-out, a
signal, exit() before the end and missing results are each named.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from grader import gtest, proc, sandbox
from grader.manifest import Exercise
from grader.model import (NEIGHBOURS_MAY_CAUSE, CaseResult, CaseStatus, StageName,
                          StageResult, StageStatus, TestsDetails)
from grader.stages.common import (NO_GPU_EXIT, NONCE_ENV, GradeOptions, clip, issue_nonce,
                                  program_env, student_command, student_scratch)

LIST_TIMEOUT_S = 60
SANDBOX_HIDES_GPU = ("CUDA could not start inside the grader's sandbox on this machine (the "
                     "grader's fault, not yours): an instructor can grade with --no-sandbox "
                     "and report it")


def list_cases(options: GradeOptions, binary: Path, gtest_filter: str | None = None, *,
               scratch: Path) -> list[str]:
    """The cases a run will report: --gtest_list_tests without the disabled ones, which it
    lists but never runs; empty when the listing fails. The student's static constructors run
    here too, so in the sandbox, writing only to `scratch`."""
    command = [str(binary), "--gtest_list_tests", *_filter_args(gtest_filter)]
    listing = proc.run(student_command(options, command, scratch), LIST_TIMEOUT_S,
                       env=program_env(options, scratch), output_limit=options.output_limit)
    names = gtest.parse_list(listing.output) if listing.returncode == 0 else []
    return [name for name in names if not _disabled(name)]


def run(options: GradeOptions, ex: Exercise, binary: Path, *, stage_name: str = StageName.TESTS,
        gtest_filter: str | None = None, wrapper: list[str] | None = None,
        timeout_s: float | None = None, extra_env: dict | None = None,
        shards: int = 1, cancel: threading.Event | None = None) -> StageResult:
    """Runs the binary (under `wrapper`, e.g. compute-sanitizer) and classifies the run.
    `stage_name` names the result and its scratch folder (a sanitizer's run: sanitizer-TOOL);
    its details are TestsDetails whatever the name. `shards` > 1 splits the cases over that
    many processes (never under a wrapper, nor for an exercise that tests alone or in one
    process). Setting
    `cancel` ends the run early (see proc.run)."""
    expected = list_cases(options, binary, gtest_filter,
                          scratch=student_scratch(options, ex, f"{stage_name}-list"))
    env = dict(extra_env or {})
    if wrapper is None and ex.case_timeout_s:
        # Under a sanitizer cases run many times slower: only the tests stage stops a case.
        env["COURSE_CASE_LIMIT_S"] = f"{ex.case_timeout_s:g}"
    if wrapper is not None or ex.tests_alone or ex.tests_one_process \
            or len(expected) < 2 * shards:
        shards = 1
    run_once = partial(_run_once, options, ex, binary, stage_name, gtest_filter, wrapper,
                       timeout_s or ex.test_timeout_s, env, cancel)
    if shards == 1:
        result, outcome, premature_exit = run_once()
    else:
        # Cores to spare: GoogleTest's own sharding splits the cases over processes, each in
        # its own sandboxed scratch folder with its own nonce; the runs are read as one.
        with ThreadPoolExecutor(max_workers=shards, thread_name_prefix="shard") as pool:
            runs = list(pool.map(lambda i: run_once((i, shards)), range(shards)))
        result, outcome, premature_exit = _merged(runs)
    details = TestsDetails(exit=result.describe_exit())
    stage = StageResult(stage_name, StageStatus.PASSED, duration_s=round(result.duration_s, 2),
                        output=result.output if result.returncode != 0 else "", details=details)
    if result.truncated:
        details.output_bytes = result.output_bytes
    if outcome.forged:
        details.forged_lines = outcome.forged
    if outcome.launched and wrapper is None:
        details.launched_kernels = sorted(outcome.launched)
    if not outcome.forged:
        details.failure_kinds = {kind for case in outcome.cases.values()
                                 if case.status == CaseStatus.FAILED
                                 for kind in case.failure_kinds}

    if result.returncode == NO_GPU_EXIT and not outcome.cases:
        if options.sandbox.on:
            # The grader saw a GPU; the program inside the sandbox did not: the machine's
            # sandbox keeps CUDA from starting, which is no reason to skip (and score 0).
            stage.status = StageStatus.ERROR
            stage.message = SANDBOX_HIDES_GPU
            return stage
        stage.status = StageStatus.SKIPPED
        stage.message = "no GPU available to run the tests"
        return stage

    _classify_run(stage, result, outcome, premature_exit)
    ended_well = stage.status == StageStatus.PASSED
    stage.cases = _cases(expected or list(outcome.cases), outcome, result, stage.message)
    if outcome.stopped and not outcome.forged:
        details.stopped = outcome.stopped
    if outcome.forged:
        # A forged run earns nothing, not even for the cases the harness did report.
        for case in stage.cases:
            case.status = CaseStatus.FAILED
            case.message = stage.message
    _classify_cases(stage)
    failed = [c.name for c in stage.cases if c.status != CaseStatus.PASSED]
    if ended_well and not outcome.forged and failed and all(
            outcome.cases.get(name) is not None and outcome.cases[name].failure_kinds
            and outcome.cases[name].failure_kinds <= NEIGHBOURS_MAY_CAUSE for name in failed):
        details.neighbour_cases = failed
    return stage


def again_alone(among_others: StageResult, alone: StageResult) -> StageResult | None:
    """The tests stage of a run among other exercises whose failed cases (its
    neighbour_cases) ran again alone: the others' results from the first run, those from the
    run alone. None when the run alone did not end well or left one of them out: the whole
    stage then runs again alone."""
    cases = {c.name: c for c in alone.cases}
    redone = among_others.details.neighbour_cases
    if alone.status not in (StageStatus.PASSED, StageStatus.FAILED) \
            or any(name not in cases or cases[name].status == CaseStatus.NOT_RUN
                   for name in redone):
        return None
    details = copy.deepcopy(among_others.details)
    details.again_alone = list(redone)
    launched = set(among_others.details.get("launched_kernels") or []) | \
        set(alone.details.get("launched_kernels") or [])
    if launched:
        details.launched_kernels = sorted(launched)
    stage = StageResult(among_others.name, StageStatus.PASSED,
                        duration_s=round(among_others.duration_s + alone.duration_s, 2),
                        output=alone.output, details=details,
                        cases=[cases[c.name] if c.name in redone else c
                               for c in among_others.cases])
    _classify_cases(stage)
    return stage


def _run_once(options: GradeOptions, ex: Exercise, binary: Path, stage_name: str,
              gtest_filter: str | None, wrapper: list[str] | None, timeout_s: float,
              env: dict, cancel: threading.Event | None, shard: tuple[int, int] | None = None
              ) -> tuple[proc.ProcResult, gtest.RunOutcome, bool]:
    """One run of the binary (shard (index, count) of its cases): how the process ended, what
    its event stream says, and whether it exited before the end."""
    # The program writes its results in a fresh folder of its own, the only place it may write:
    # nothing it plants there outlives the run or reaches the grader's files.
    name = stage_name if shard is None else f"{stage_name}-shard{shard[0]}"
    scratch = student_scratch(options, ex, name)
    events = scratch / "events"
    premature = scratch / "premature"
    nonce_file = scratch / "nonce"
    nonce = issue_nonce(nonce_file)
    command = student_command(options, (wrapper or []) + [str(binary),
                                                          *_filter_args(gtest_filter)], scratch)
    sharding = {} if shard is None else {"GTEST_SHARD_INDEX": str(shard[0]),
                                         "GTEST_TOTAL_SHARDS": str(shard[1])}
    result = proc.run(command, timeout_s,
                      env=program_env(options, scratch, COURSE_EVENTS=str(events),
                                      TEST_PREMATURE_EXIT_FILE=str(premature),
                                      **{NONCE_ENV: str(nonce_file)}, **env, **sharding),
                      output_limit=options.output_limit, cancel=cancel)
    sandbox.remove(nonce_file)
    outcome = gtest.parse_events(events, nonce) if sandbox.regular_file(events) \
        else gtest.RunOutcome()
    return result, outcome, os.path.lexists(premature)


def _merged(runs: list[tuple[proc.ProcResult, gtest.RunOutcome, bool]]
            ) -> tuple[proc.ProcResult, gtest.RunOutcome, bool]:
    """The shards' runs as one: every case each reported, finished only when all finished,
    and the process end of the first shard that ended badly (else of the first with failing
    cases, else the first's), lasting as long as the longest."""
    def ended_badly(run) -> bool:
        result, outcome, premature = run
        return (result.returncode not in (0, 1) or result.timed_out or bool(result.signal_name)
                or premature or not outcome.finished or outcome.stopped is not None
                or outcome.forged > 0)

    worst = next((run for run in runs if ended_badly(run)),
                 next((run for run in runs if run[0].returncode != 0), runs[0]))
    merged = gtest.RunOutcome(finished=all(outcome.finished for _, outcome, _ in runs),
                              running=worst[1].running,
                              stopped=next((o.stopped for _, o, _ in runs if o.stopped), None),
                              stop_limit_s=max(o.stop_limit_s for _, o, _ in runs))
    for _, outcome, _ in runs:
        merged.cases.update(outcome.cases)
        merged.forged += outcome.forged
        merged.launched |= outcome.launched
    result = dataclasses.replace(worst[0], duration_s=max(r.duration_s for r, _, _ in runs))
    return result, merged, worst[2]


def _classify_run(stage: StageResult, result: proc.ProcResult, outcome: gtest.RunOutcome,
                  premature_exit: bool) -> None:
    """How the process ended, when that alone makes the run fail."""
    where = f" while running {outcome.running}" if outcome.running else ""
    died = not outcome.finished
    if outcome.forged:
        # Only code in the test process could have written them: the student's.
        stage.status = StageStatus.FAILED
        stage.message = (f"{outcome.forged} result line{'s' if outcome.forged != 1 else ''} "
                         "not written by the course's harness (no valid run nonce): results "
                         "were forged, and the run counts for nothing")
    elif outcome.stopped:
        # A failure, not a time-out: the case is named, and the run ended in seconds.
        stage.status = StageStatus.FAILED
        stage.message = (f"{outcome.stopped} did not finish within "
                         f"{outcome.stop_limit_s:g} s, so the run was stopped there: a kernel "
                         "that never ends, or launches from the device that never stop (a "
                         "recursion with no depth limit?)")
    elif result.timed_out:
        stage.status = StageStatus.TIMED_OUT
        stage.message = (f"timed out after {result.duration_s:.0f} s{where} "
                         "(a kernel that never finishes, or a deadlock at a barrier?)")
    elif result.signal_name:
        stage.status = StageStatus.CRASHED
        stage.message = f"crashed with {result.signal_name}{where}"
    elif died and premature_exit:
        stage.status = StageStatus.EXITED_EARLY
        stage.message = (f"exited early with exit status {result.returncode}{where}, "
                         "before the tests finished: something called exit() or abort()")
    elif died and result.returncode not in (0, 1):
        stage.status = StageStatus.CRASHED
        stage.message = f"ended with {result.describe_exit()}{where} and wrote no results"
    elif died:
        stage.status = StageStatus.CRASHED
        stage.message = f"ended with {result.describe_exit()}{where} before its last case"


def _cases(names: list[str], outcome: gtest.RunOutcome, result: proc.ProcResult,
           run_message: str) -> list[CaseResult]:
    """One result per expected case; the one running when the process died takes the blame."""
    cases = []
    for name in names:
        case = outcome.cases.get(name)
        if name == outcome.stopped:
            cases.append(CaseResult(name, CaseStatus.FAILED, run_message))
        elif case is not None:
            cases.append(CaseResult(name, case.status, clip(case.message, 4096),
                                    case.duration_ms))
        elif name == outcome.running:
            cases.append(CaseResult(name, CaseStatus.TIMED_OUT if result.timed_out
                                    else CaseStatus.CRASHED, run_message))
        else:
            cases.append(CaseResult(name, CaseStatus.NOT_RUN))
    return cases


def _classify_cases(stage: StageResult) -> None:
    """Counts the cases; a run that ended well still fails on a missing or failing case."""
    passed = sum(c.status == CaseStatus.PASSED for c in stage.cases)
    reported = sum(c.status != CaseStatus.NOT_RUN for c in stage.cases)
    stage.details.passed = passed
    stage.details.total = len(stage.cases)
    if stage.status != StageStatus.PASSED:
        return
    if not stage.cases:
        stage.status = StageStatus.FAILED
        stage.message = "no test cases ran"
    elif reported < len(stage.cases):
        stage.status = StageStatus.FAILED
        stage.message = (f"only {reported} of {len(stage.cases)} cases reported "
                         f"({passed} passed)")
    elif passed < len(stage.cases):
        stage.status = StageStatus.FAILED
        stage.message = f"{passed} of {len(stage.cases)} cases passed"
    else:
        stage.message = f"all {passed} cases passed"


def _filter_args(gtest_filter: str | None) -> list[str]:
    return [f"--gtest_filter={gtest_filter}"] if gtest_filter else []


def _disabled(case: str) -> bool:
    return any(part.startswith("DISABLED_") for part in re.split(r"[./]", case))
