"""Views of a Report in the formats teaching platforms read, and the files that wire the
grader into them: Gradescope (results.json, and an autograder zip), PrairieLearn (external
grading results.json), GitHub Classroom (what autograding-grading-reporter reads, and the
workflow that produces it); with a grading service's URL, the same wiring for machines without
a GPU, whose jobs send each submission to the service (a zip, an image recipe, a workflow for
GitHub's hosted runners). Like render.py, nothing here re-derives a score: every number
comes from the report (Classroom's are its points rounded to whole points, which the
reporter's log needs to show the totals it sends). PrairieLearn's and Classroom's results stay
within their platforms' size limits whatever the report: long texts are cut, with a note
saying where the rest is.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import traceback
import urllib.parse
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from grader import manifest, proc, render, template
from grader.errors import EXIT_INCOMPLETE, GraderError
from grader.model import CaseStatus, ExerciseResult, ExerciseStatus, Report, StageStatus

_EPS = 1e-9
_MAX_CASES = 10        # failing cases listed per stage
_MAX_TEXT = 20000      # characters per text field


def _clip(text: str) -> str:
    if len(text) <= _MAX_TEXT:
        return text
    return text[: _MAX_TEXT // 2] + "\n... (cut; the grader's JSON report has it all) ...\n" \
        + text[-_MAX_TEXT // 2:]


def results_text(data: dict) -> str:
    """A results file as the grader writes it; its size is what the platforms' limits count."""
    return json.dumps(data, indent=2) + "\n"


def encoded_size(data: dict) -> int:
    return len(results_text(data).encode("utf-8"))


def _full_marks(ex: ExerciseResult) -> bool:
    return ex.max_score > 0 and ex.score + _EPS >= ex.max_score


def exercise_text(ex: ExerciseResult) -> str:
    """What happened to one exercise, as plain text: its stages, failing cases, points per
    performance criterion, and the output of a stage that did not pass."""
    lines = [f"{ex.key}: {ex.status.replace('_', ' ')}, {ex.score:g}/{ex.max_score:g} points"]
    if ex.message:
        lines.append(ex.message)
    for stage in ex.stages:
        lines.append(f"{stage.name}: {stage.status}"
                     + (f" - {stage.message}" if stage.message else ""))
        failed = [c for c in stage.cases if c.status != CaseStatus.PASSED]
        for case in failed[:_MAX_CASES]:
            lines.append(f"  x {case.name} [{case.status}]"
                         + (f": {case.message}" if case.message else ""))
        if len(failed) > _MAX_CASES:
            lines.append(f"  ... and {len(failed) - _MAX_CASES} more failing cases")
        for m in stage.metrics:
            lines.append(f"  {m.name}: {m.points:g}/{m.max_points:g}"
                         + (f" - {m.message}" if m.message else ""))
        if stage.output and stage.status != StageStatus.PASSED:
            lines.append(stage.output.rstrip())
    return _clip("\n".join(lines))


def _summary(report: Report) -> str:
    # A StringIO is not a terminal, so the table comes without colour codes.
    from io import StringIO
    return _clip(render.terminal(report, StringIO()))


def _seconds(report: Report) -> int | None:
    try:
        took = (datetime.fromisoformat(report.finished_at)
                - datetime.fromisoformat(report.started_at)).total_seconds()
    except (TypeError, ValueError):
        return None
    return max(0, round(took))


# ------------------------------------------------------------------------------ Gradescope
# Fields as https://gradescope-autograders.readthedocs.io/en/latest/specs/ ("Output format",
# "Test case status", visibility) and .../leaderboards/ describe them.

def gradescope(report: Report, visibility: str = "visible") -> dict:
    """results.json for a Gradescope autograder: one test per exercise, a leaderboard entry
    per measured performance ratio (higher is better)."""
    tests = [{"name": f"{ex.key}: {ex.title}", "score": round(ex.score, 3),
              "max_score": round(ex.max_score, 3),
              "status": "passed" if _full_marks(ex) else "failed",
              "output": exercise_text(ex), "visibility": visibility}
             for ex in report.exercises]
    leaderboard = [{"name": f"{ex.name} {m.name}", "value": round(m.ratio, 4), "order": "desc"}
                   for ex in report.exercises for stage in ex.stages for m in stage.metrics
                   if m.ratio is not None]
    data = {"score": round(report.score, 3), "output": _summary(report),
            "output_format": "text", "test_output_format": "text",
            "visibility": visibility, "stdout_visibility": "hidden", "tests": tests,
            "leaderboard": leaderboard}
    seconds = _seconds(report)
    if seconds is not None:
        data["execution_time"] = seconds
    return data


def gradescope_failure(message: str) -> dict:
    """results.json when there is no report to show (the grader could not run)."""
    return {"score": 0.0, "output": message, "output_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden", "tests": []}


# ---------------------------------------------------------------------------- PrairieLearn
# Fields as PrairieLearn's external grading documentation, "Grading results", describes them:
# https://prairielearn.readthedocs.io/en/latest/externalGrading/#grading-results
# (score in [0, 1]; gradable false marks the submission invalid without costing an attempt,
# with format_errors; message, output and tests of name/description/points/max_points/
# message/output for <pl-external-grader-results>). The grader host refuses a results.json
# over 1 MB: the results are kept to half of that, whatever the report (a whole course of
# skeletons fails thousands of cases, each with its output).

PRAIRIELEARN_LIMIT = 1_000_000
PRAIRIELEARN_BUDGET = PRAIRIELEARN_LIMIT // 2
PRAIRIELEARN_CUT = ("cut to keep these results under PrairieLearn's 1 MB limit; this grading "
                    "job's output and the grader's JSON report have the rest")
_CAPS = (8000, 4000, 2000, 1000, 400, 100, 0)  # characters per text, tried in turn


def _cut(text: str, cap: int, why: str) -> str:
    """text within cap characters, its start and its end, and a note saying what was cut."""
    if len(text) <= cap:
        return text
    note = f"[... {len(text) - cap} characters {why} ...]"
    head = cap - cap // 3  # the start says what failed first, the end how it ended
    return text[:head] + ("\n" if head else "") + note \
        + ("\n" + text[len(text) - (cap - head):] if cap - head else "")


def _within(data: dict, budget: int, why: str) -> dict:
    """data cut until its results file takes at most `budget` bytes: the tests' outputs
    first, then the messages, then the top output; a report of more exercises than even that
    holds loses its last tests, counted in one line (the score is not touched)."""
    if encoded_size(data) <= budget:
        return data
    data = copy.deepcopy(data)
    tests = data.get("tests", [])
    errors = data.get("format_errors", [])
    rounds = [[(t, "output") for t in tests],
              [(t, "message") for t in tests] + [(data, "message")]
              + [(errors, i) for i in range(len(errors))],
              [(data, "output")]]
    for places in rounds:
        places = [(holder, key, holder[key]) for holder, key in places
                  if isinstance(holder, list) or isinstance(holder.get(key), str)]
        for cap in _CAPS:
            for holder, key, original in places:
                holder[key] = _cut(original, cap, why)
            if encoded_size(data) <= budget:
                return data
    kept = len(tests)
    while encoded_size(data) > budget and kept:
        kept //= 2
        left = len(tests) - kept
        data["tests"] = tests[:kept] + [{"name": f"{left} more", "description":
                                         f"{left} more exercises not listed: {why}"}]
        if len(errors) > max(kept, 1):
            data["format_errors"] = errors[:max(kept, 1)] + [
                f"and {len(errors) - max(kept, 1)} more: {why}"]
    return data


def prairielearn(report: Report, budget: int = PRAIRIELEARN_BUDGET) -> dict:
    """results.json for PrairieLearn's external grader, within `budget` bytes. A compile
    error makes the submission not gradable (the student keeps the attempt), as PrairieLearn
    intends for code that does not compile; so does a grade left incomplete because another
    process kept the GPU busy (submitting again grades it)."""
    broken = [ex for ex in report.exercises if ex.status == ExerciseStatus.COMPILE_ERROR]
    tests = [{"name": ex.key, "description": ex.title, "points": round(ex.score, 3),
              "max_points": round(ex.max_score, 3), "message": ex.message,
              "output": exercise_text(ex)} for ex in report.exercises]
    if broken:
        errors = [f"{ex.key}: {ex.message or 'compilation failed'}" for ex in broken]
        data = {"gradable": False, "format_errors": errors,
                "message": "Your code did not compile: " + "; ".join(errors),
                "output": _clip("\n\n".join(exercise_text(ex) for ex in broken)),
                "tests": tests}
    elif report.incomplete:
        names = ", ".join(ex.key for ex in report.incomplete)
        reason = (f"not measured: another process kept the GPU busy ({names}); submit again "
                  "to have it graded")
        data = {"gradable": False, "format_errors": [reason], "message": reason,
                "output": _summary(report), "tests": tests}
    else:
        score = report.score / report.max_score if report.max_score else 0.0
        data = {"gradable": True, "score": round(min(1.0, max(0.0, score)), 4),
                "message": f"{report.score:g}/{report.max_score:g} points "
                           f"({report.percent:.1f}%)",
                "output": _summary(report), "tests": tests}
    return _within(data, budget, PRAIRIELEARN_CUT)


def prairielearn_failure(reason: str) -> dict:
    """results.json when the grader could not grade: not gradable (no attempt lost), why."""
    reason = _cut(reason, 4000, PRAIRIELEARN_CUT)
    return {"gradable": False, "format_errors": [reason],
            "message": f"This submission could not be graded: {reason}", "output": reason,
            "tests": []}


# -------------------------------------------------------------------------- GitHub Classroom
# classroom-resources/autograding-grading-reporter (v1) reads, for each runner id in its
# `runners` input, the environment variable <ID>_RESULTS: base64 of a JSON object with status
# (pass/fail/error), max_score and tests [{name, status, score, message, line_no}]
# (src/main.js). Two sums come from it (dist/main.js, its end):
# - the points it sends to Classroom (NotifyClassroom, src/notify-classroom.js): the sum of
#   every test's score over the sum of the runners' max_score;
# - the totals its log prints (ConsoleResults and its table, getTestScore): for each runner,
#   (tests passed / tests) x max_score, whatever the tests' scores.
# One runner per chapter can show only multiples of max_score / tests, so each chapter is two
# runners whose log totals are exactly their points: <id>earned, max_score the chapter's points
# earned and every test passed (one test per exercise that earned points, its score those
# points), and <id>missed, max_score the points missed and every test failed with score 0
# (one per exercise that missed points). The points are whole numbers (each exercise's
# rounded down or up so that the chapter's add up to its rounded total, halves up): sums of
# whole numbers are exact in the reporter's arithmetic, so the log's totals are the points
# sent. A test's line_no of 0 keeps the log from printing "line undefined" after its name.
#
# Linux caps one environment string (name=value) at MAX_ARG_STRLEN, 131072 bytes: a bigger
# value stops the reporter before it starts ("Argument list too long"). Every value here stays
# within CLASSROOM_LIMIT whatever the report: the log gets short lines, and the details are
# in the Grade step's output and the grading-report artifact (the reporter reads nothing but
# these variables, so no file can carry them instead).

CLASSROOM_REPORT = "build/classroom/report.json"
CLASSROOM_LIMIT = 32 * 1024
CLASSROOM_DETAILS = "the Grade step's output, or this run's grading-report artifact"
_LINE = 160  # characters of an exercise's message in its line of the log


def _one_line(text: str, width: int) -> str:
    head = " ".join(text[:4 * width].split())  # a message may be megabytes: its start will do
    if len(head) <= width and len(text) <= 4 * width:
        return head
    return head[:width - 1] + "…"


def _number(x: float) -> int | float:
    """A point count as JSON: a whole number without '.0' (the reporter prints it as is)."""
    x = round(x, 6)
    return int(x) if x == int(x) else x


def whole_points(scores: list[float]) -> list[int]:
    """Each score in whole points, rounded down or up so that they add up to their sum
    rounded (halves up); the largest fractions are the ones rounded up."""
    exact = [round(s, 6) for s in scores]
    points = [math.floor(s) for s in exact]
    extra = math.floor(sum(exact) + 0.5) - sum(points)
    for i in sorted(range(len(exact)), key=lambda i: (points[i] - exact[i], i))[:extra]:
        points[i] += 1
    return points


def _test(name: str, status: str, score: int = 0, message: str | None = None) -> dict:
    test = {"name": name, "status": status, "score": score, "line_no": 0}
    if message is not None:
        test["message"] = message
    return test


def _runner(tests: list[dict], max_score: float, error: bool = False) -> dict:
    status = "error" if error else ("pass" if all(t["status"] == "pass" for t in tests)
                                    else "fail")
    return {"version": 1, "status": status, "max_score": _number(max_score), "tests": tests}


def classroom_value(result: dict) -> str:
    """The <ID>_RESULTS value the reporter decodes: base64 of the JSON."""
    return base64.b64encode(json.dumps(result, separators=(",", ":")).encode("utf-8")) \
        .decode("ascii")


def _fitted(result: dict, limit: int = CLASSROOM_LIMIT) -> dict:
    """result with a value of at most `limit` bytes: shorter lines, then its last tests
    merged into one line of the same status and their points together (sums unchanged)."""
    if len(classroom_value(result)) <= limit:
        return result
    result = copy.deepcopy(result)
    for width in (100, 60, 30):
        for test in result["tests"]:
            test["name"] = _one_line(test["name"], width)
            if "message" in test:
                test["message"] = _one_line(test["message"], 2 * width)
        if len(classroom_value(result)) <= limit:
            return result
    first, rest = result["tests"][:1], result["tests"][1:]
    kept = len(rest)
    while kept and len(classroom_value(result)) > limit:
        kept //= 2
        merged = rest[kept:]
        result["tests"] = first + rest[:kept] + [_test(
            f"and {len(merged)} more: {CLASSROOM_DETAILS}", merged[0]["status"],
            sum(t["score"] for t in merged))]
    return result


def classroom_results(report: Report | None, chapter: str, max_score: float,
                      problem: str = "") -> tuple[dict, dict]:
    """The reporter's two results for one chapter of a report, earned and missed (None, with
    problem: no report); each within CLASSROOM_LIMIT once encoded."""
    exercises = [ex for ex in report.exercises if ex.chapter == chapter] if report else []
    if report is not None and report.options.get("build_only"):
        # Nothing ran, so there are no points to report: an error, not a 0 that reads as one.
        exercises, problem = [], ("the grading report is of a --build-only run, which ran "
                                  "nothing: there are no points to report")
    if not exercises:
        message = _one_line(problem or f"the grading report holds no exercise of {chapter}",
                            2000)
        return (_fitted(_runner([_test(chapter, "error", 0, message)], 0, error=True)),
                _fitted(_runner([_test(f"{chapter}: {max_score:g} points not graded", "fail")],
                                max_score, error=True)))
    points = whole_points([ex.score for ex in exercises])
    # Never more than the chapter's points (a report of an older course may hold more).
    over = sum(points) - math.floor(max_score + _EPS)
    for i in reversed(range(len(points))):
        cut = min(max(over, 0), points[i])
        points[i] -= cut
        over -= cut
    got = sum(points)
    earned = [_test(f"{chapter}: {got} of {max_score:g} points (whole points; each "
                    f"exercise's details: {CLASSROOM_DETAILS})", "pass" if got else "fail")]
    earned += [_test(f"{ex.key}: {p} of {ex.max_score:g} points", "pass", p)
               for ex, p in zip(exercises, points) if p > 0]
    missed = []
    for ex, p in zip(exercises, points):
        if p + _EPS < ex.max_score:
            why = ex.status.replace("_", " ") + (f": {ex.message}" if ex.message else "")
            missed.append(_test(f"{ex.key}: {_number(ex.max_score - p)} of "
                                f"{ex.max_score:g} points missed ({_one_line(why, _LINE)})",
                                "fail"))
    listed = sum(ex.max_score - p for ex, p in zip(exercises, points) if p < ex.max_score)
    lost = max_score - got
    if lost - listed > _EPS:
        missed.append(_test(f"{chapter}: {_number(lost - listed)} points of exercises the "
                            "grading report does not hold", "fail"))
    if not missed:
        missed = [_test(f"{chapter}: no points missed", "pass")]
    return _fitted(_runner(earned, got)), _fitted(_runner(missed, max(lost, 0.0)))


def classroom_result(report: Report | None, chapter: str, max_score: float,
                     problem: str = "") -> dict:
    """The earned half of classroom_results (with the error, when there is one)."""
    return classroom_results(report, chapter, max_score, problem)[0]


def classroom_output(results: tuple[dict, dict]) -> str:
    """The step output lines ($GITHUB_OUTPUT) the reporter's two <ID>_RESULTS are set from."""
    earned, missed = results
    return f"earned={classroom_value(earned)}\nmissed={classroom_value(missed)}"


def chapter_points(exercises: list[manifest.Exercise]) -> dict[str, float]:
    points: dict[str, float] = {}
    for ex in exercises:
        points[ex.chapter] = points.get(ex.chapter, 0.0) + ex.max_points
    return points


def classroom_runners(chapters) -> dict[str, tuple[str, str, str]]:
    """Each chapter's step id and its two runner ids (letters and digits, as the reporter's
    `runners` input requires)."""
    return {c: (c[:4], f"{c[:4]}earned", f"{c[:4]}missed") for c in chapters}


def classroom_workflow(exercises: list[manifest.Exercise], service: str | None = None) -> str:
    """.github/workflows/classroom.yml: grade once, then one step per chapter turning the
    report into that chapter's two results (its max score from the manifests), then the
    reporter. The grade runs on a self-hosted GPU runner, or, with `service` (a grading
    service's URL), on GitHub's hosted runners, which send the workspace to the service."""
    points = chapter_points(exercises)
    runners = classroom_runners(points)
    steps = "".join(
        f"      - name: {chapter}\n"
        f"        id: {step}\n"
        f"        run: >-\n"
        f"          \"$PY\" -m grader classroom-points {CLASSROOM_REPORT}\n"
        f"          --chapter {chapter} --max-score {score:g} >> \"$GITHUB_OUTPUT\"\n"
        for (chapter, score), (step, _, _) in zip(points.items(), runners.values()))
    env = "".join(f"          {runner.upper()}_RESULTS: "
                  f"\"${{{{ steps.{step}.outputs.{half} }}}}\"\n"
                  for step, *ids in runners.values()
                  for runner, half in zip(ids, ("earned", "missed")))
    names = ",".join(r for _, *ids in runners.values() for r in ids)
    total = f"{sum(points.values()):g}"
    about, runs_on, grade = (_classroom_service(service, total) if service
                             else _classroom_gpu(total))
    return f"""\
{about}#
# This file and the grader live in the student's repository, which the student controls: the
# score is feedback, and a class is graded with 'python3 -m grader batch' (docs/instructors.md,
# "What a platform's score is worth, and final grades").
name: Autograding Tests
"on":
  - push
  - workflow_dispatch
  - repository_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: {runs_on}
    if: github.actor != 'github-classroom[bot]'
    timeout-minutes: 120
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
{grade}      - name: Keep the grading report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: grading-report
          path: {CLASSROOM_REPORT}
          if-no-files-found: ignore
{steps}      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
{env}        with:
          runners: {names}
"""


def _classroom_gpu(total: str) -> tuple[str, str, str]:
    """The workflow's comment, runner and grade step where a GPU runner grades."""
    about = f"""\
# GitHub Classroom autograding for the CUDA course. Generated from the exercise manifests by
# 'python3 -m grader export-template'; export again when exercises or points change. Adding
# or editing tests in Classroom's web editor replaces this file: add none there.
#
# GitHub's hosted runners have no GPU, so this job runs on a self-hosted runner that has an
# NVIDIA GPU, the CUDA toolkit 12+ and Python 3.11+ (labels: self-hosted, gpu). The student's
# work is workspace/; the grader builds and runs it once, then each chapter's step reports
# that chapter's points to autograding-grading-reporter as two runners, what was earned and
# what was missed, in whole points, so that the totals its log prints are the points it
# sends (total: {total}).
"""
    grade = f"""\
      - name: Grade
        # Every step runs the set-up's Python (3.11+, the course's .venv): $PY goes to the
        # job's environment. CI=false keeps the set-up from installing the course's own CI
        # tools, which it does where CI=true (GitHub sets it). Exit 2 (the grader could not
        # run) still lets each chapter report: with no report, an error and 0 points.
        run: |
          CI=false . scripts/setup.sh
          echo "PY=$PY" >> "$GITHUB_ENV"
          "$PY" -m grader grade --json {CLASSROOM_REPORT} -q || true
"""
    return about, "[self-hosted, gpu]", grade


CLASSROOM_SECRET = "COURSE_SERVICE_TOKEN"  # the repository's or organisation's secret


def _classroom_service(url: str, total: str) -> tuple[str, str, str]:
    """The workflow's comment, runner and grade step where a grading service grades."""
    about = f"""\
# GitHub Classroom autograding for the CUDA course, through the course's grading service.
# Generated from the exercise manifests by 'python3 -m grader export-template --service URL';
# export again when exercises or points change. Adding or editing tests in Classroom's web
# editor replaces this file: add none there.
#
# It runs on GitHub's hosted runners (ubuntu-latest), which need no GPU: the Grade step sends
# the student's workspace/ to the course's grading service, which grades it on the course's
# GPUs, and saves the service's report. The service:
#   {url}
# Then each chapter's step reports that chapter's points to autograding-grading-reporter as
# two runners, what was earned and what was missed, in whole points, so that the totals its
# log prints are the points it sends (total: {total}). The service's token is the Actions
# secret {CLASSROOM_SECRET}, of the repository or of the classroom's organisation (Settings,
# Secrets and variables, Actions).
"""
    grade = f"""\
      - name: Set up Python
        uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Grade
        # The grader's client needs Python 3.11+ and nothing else (no GPU, no CUDA, no build):
        # $PY goes to the job's environment for the chapters' steps. The token reaches this
        # step alone. Exit 2 (no token, the service out of reach or unable to grade) still
        # lets each chapter report: with no report, an error and 0 points.
        env:
          {CLASSROOM_SECRET}: "${{{{ secrets.{CLASSROOM_SECRET} }}}}"
        run: |
          echo "PY=$(command -v python)" >> "$GITHUB_ENV"
          if [ -z "${CLASSROOM_SECRET}" ]; then
            echo "::error::no Actions secret {CLASSROOM_SECRET}: the service's token is missing"
          fi
          python -m grader classroom-run --service {shlex.quote(url)} \\
            --json {CLASSROOM_REPORT} --client-ref "$GITHUB_REPOSITORY@$GITHUB_SHA" || true
"""
    return about, "ubuntu-latest", grade


# ------------------------------------------------------------------ Gradescope autograder

GRADESCOPE_SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image (Ubuntu).
# This course compiles CUDA and runs it on a GPU: the image must have the CUDA toolkit 12+
# (nvcc) and the machine that runs run_autograder an NVIDIA GPU. Gradescope's standard images
# have neither; without a GPU every submission gets 0 points, and the output says why.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip libgtest-dev pkg-config ccache
# The grader needs Python 3.11+ (Ubuntu 22.04's python3 is 3.10).
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \\
  || apt-get install -y -qq python3.11 python3.11-venv
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup.sh: nvcc not found: this autograder needs an image with the CUDA toolkit 12+" >&2
  exit 1
fi
# Meson, Ninja and pytest into /autograder/source/.venv.
bash /autograder/source/scripts/setup.sh
"""

GRADESCOPE_RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission. The student's files (/autograder/submission,
# as uploaded: loose .cu files, chapter folders or a whole workspace/) are placed as the
# grader expects, graded on the GPU, and /autograder/results/results.json written.
set -euo pipefail
cd /autograder/source
. scripts/setup.sh
exec "$PY" -m grader gradescope-run --upload /autograder/submission \\
  --results /autograder/results/results.json
"""


# -------------------------------------------------- platforms through the grading service
# With --service, a platform's job grades nothing itself: it lays the student's files out and
# sends them to the course's grading service (grader/service/client.py). It needs Python 3.11+
# and what laying out takes, the grader package and the chapters' manifests: no CUDA, no GPU,
# no build, no skeletons, no solutions.

SERVICE_TOKEN = "service-token"  # the token's file, beside the course files, where there is one
PYTHON_311 = "import sys; sys.exit(sys.version_info < (3, 11))"


def service_url(url: str) -> str:
    """The grading service's address as a platform's script will hold it: http(s), a host,
    nothing a shell or a YAML file would read otherwise."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GraderError(f"--service {url!r} is not the address of a grading service; give "
                          "one like https://grading.example.edu")
    if any(c.isspace() or not c.isprintable() or c in "'\"`$\\" for c in url) \
            or parts.query or parts.fragment:
        raise GraderError(f"--service {url!r}: give the service's address alone (scheme, "
                          "host, port, path), without quotes, spaces or a query")
    return url.rstrip("/")


def service_token(path: Path) -> str:
    """The token in the file --service-token-file names, checked: one line of printable
    characters. Never printed: an error names the file, not what it holds."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError) as error:
        raise GraderError(f"--service-token-file {path}: cannot read it "
                          f"({getattr(error, 'strerror', None) or 'not text'})") from None
    if not token or any(c.isspace() or not c.isprintable() for c in token):
        raise GraderError(f"--service-token-file {path} must hold the token alone, on one line "
                          "('python3 -m grader serve-token add' prints one)")
    return token


def service_files(root: Path) -> list[str]:
    """The course files a platform's job needs to send a submission to the service: the
    grader package and the chapters (their manifests name each exercise's files), as the
    student template has them."""
    return [rel for rel in template.files(root) if rel.split("/", 1)[0] in ("grader", "chapters")]


_FIND_PYTHON = f"""\
python_311() {{  # the first Python 3.11+ on the PATH
  for py in python3 python3.13 python3.12 python3.11; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c '{PYTHON_311}' 2>/dev/null; then
      echo "$py"
      return 0
    fi
  done
  return 1
}}
"""

GRADESCOPE_SERVICE_SETUP = f"""\
#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image. This autograder
# compiles and runs nothing on Gradescope: run_autograder sends each upload to the course's
# grading service, which grades it on the course's GPUs. So any of Gradescope's standard Ubuntu
# images will do (22.04 or newer): it needs Python 3.11+ and the CA certificates (HTTPS), no
# CUDA toolkit, no GPU, no build of the course.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
{_FIND_PYTHON}apt-get update -qq
apt-get install -y -qq ca-certificates
python_311 >/dev/null || apt-get install -y -qq python3.11
if ! python_311 >/dev/null; then
  echo "setup.sh: no Python 3.11+ in this image's packages: choose Ubuntu 22.04 or newer" >&2
  exit 1
fi
cd /autograder/source
"$(python_311)" -m grader list >/dev/null  # the course's manifests, read as each run will
"""


def gradescope_service_run(url: str, token_file: bool) -> str:
    """run_autograder of an autograder that sends each upload to the service at url; the
    token from the zip's service-token file, or else $COURSE_SERVICE_TOKEN."""
    token = (f' \\\n    --service-token-file "$root/source/{SERVICE_TOKEN}"' if token_file
             else "")
    return f"""\
#!/usr/bin/env bash
# Gradescope runs this for every submission. Nothing of the student's is compiled or run
# here: the upload (/autograder/submission: loose .cu files, chapter folders or a whole
# workspace/) is laid out as the grader expects and sent to the course's grading service,
# whose grade becomes /autograder/results/results.json (a 0 saying why when the service
# cannot grade it). The service's token: {"the file " + SERVICE_TOKEN + " of this autograder"
                                         if token_file else "$COURSE_SERVICE_TOKEN"}.
# AUTOGRADER_ROOT (default /autograder) moves the three folders, for a trial elsewhere.
set -uo pipefail
root="${{AUTOGRADER_ROOT:-/autograder}}"
{_FIND_PYTHON}if py=$(python_311); then
  cd "$root/source" || exit 1
  exec "$py" -m grader gradescope-run --service {shlex.quote(url)}{token} \\
    --upload "$root/submission" --results "$root/results/results.json"
fi
echo "run_autograder: no Python 3.11 or newer (setup.sh installs it)" >&2
mkdir -p "$root/results"
printf '%s\\n' '{{"score": 0, "output": "The autograder has no Python 3.11 or newer: its \
setup.sh installs one; rebuild the autograder.", "output_format": "text", "tests": []}}' \\
  > "$root/results/results.json"
"""


def gradescope_zip(root: Path, out: Path, service: str | None = None,
                   token: str | None = None) -> list[str]:
    """The autograder zip: setup.sh and run_autograder at its root beside the template's
    course files (no solutions); returns the names in it. With `service` (the service's
    URL): the scripts that send each upload there, beside the files that takes, and the
    token, when given, in the file service-token (mode 0600)."""
    # Into a temporary file beside `out`, renamed over it once whole: a failed write (a full
    # disk, a read-only folder) leaves no half zip and the old one as it was.
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(fd)
    try:
        names = _fill_zip(root, Path(tmp), service, token)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as a plain write would make it, not mkstemp's 0600
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return names


def _fill_zip(root: Path, out: Path, service: str | None, token: str | None) -> list[str]:
    if service:
        scripts = {"setup.sh": GRADESCOPE_SERVICE_SETUP,
                   "run_autograder": gradescope_service_run(service, token is not None)}
        files = service_files(root)
    else:
        scripts = {"setup.sh": GRADESCOPE_SETUP, "run_autograder": GRADESCOPE_RUN}
        files = template.files(root)
    written = {**{name: (text, 0o755) for name, text in scripts.items()},
               **({SERVICE_TOKEN: (token + "\n", 0o600)} if token is not None else {})}
    names = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, (text, mode) in written.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100000 | mode) << 16  # a regular file, in Unix attributes
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text)
            names.append(name)
        for rel in files:
            zf.write(root / rel, rel)
            names.append(rel)
        zf.writestr(template.MARKER, "A Gradescope autograder made by 'python3 -m grader "
                    "export-gradescope': no solutions/.\n")
        names.append(template.MARKER)
    return names


# ---------------------------------------------------- PrairieLearn image, through the service

PL_ENTRYPOINT = "prairielearn-entrypoint"      # in the image's /course
PL_TOKEN_FOLDER = "cuda-course-service"        # under the PrairieLearn course's serverFilesCourse
PL_IMAGE = "DOCKERHUB_USER/cuda-course-grader"
PL_WAIT_S = 540  # the service's queue and grade, within PrairieLearn's 600 s a job


def prairielearn_entrypoint(url: str) -> str:
    """The image's entrypoint: prairielearn-run --service with the question's arguments."""
    return f"""\
#!/bin/sh
# PrairieLearn's external grader runs this in the grading container, with the question's
# arguments (-e EXERCISE, from the entrypoint in its info.json). Nothing of the student's is
# compiled or run here: the files in /grade/student are laid out as the grader expects and
# sent to the course's grading service, whose grade becomes /grade/results/results.json (not
# gradable, saying why, when the service cannot grade it within {PL_WAIT_S} s). The service's
# token: the file serverFilesCourse/{PL_TOKEN_FOLDER}/{SERVICE_TOKEN} where the question copies it
# into /grade, else $COURSE_SERVICE_TOKEN (the question's environment).
# GRADE_ROOT (default /grade) moves /grade, for a trial elsewhere.
set -u
grade="${{GRADE_ROOT:-/grade}}"
token="$grade/serverFilesCourse/{PL_TOKEN_FOLDER}/{SERVICE_TOKEN}"
if [ -f "$token" ]; then
  set -- --service-token-file "$token" "$@"
fi
{_FIND_PYTHON}if py=$(python_311); then
  cd "$(dirname "$0")" || exit 1
  exec "$py" -m grader prairielearn-run --service {shlex.quote(url)} \\
    --service-wait {PL_WAIT_S} --student "$grade/student" \\
    --results "$grade/results/results.json" "$@"
fi
echo "{PL_ENTRYPOINT}: no Python 3.11 or newer in this image" >&2
exit 1
"""


def _prairielearn_dockerfile(url: str) -> str:
    return f"""\
# The CUDA course's external grader image for PrairieLearn, grading through the course's
# grading service ({url}): each submission is laid out and sent there, so the image
# holds Python and the grader's package and chapters alone: no CUDA, no GPU, no solutions and
# no token. Made by 'python3 -m grader export-prairielearn'; README.md says how to use it.
FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY course/ /course/
RUN chmod 0755 /course/{PL_ENTRYPOINT} \\
    && mkdir -p /course/build && chmod 0777 /course/build \\
    && cd /course && python3 -m grader list >/dev/null
ENTRYPOINT ["/course/{PL_ENTRYPOINT}"]
"""


def _prairielearn_question(image: str, token: bool) -> dict:
    options = {"enabled": True, "image": image,
               "entrypoint": [f"/course/{PL_ENTRYPOINT}", "-e", "vector_add"],
               "timeout": 600, "enableNetworking": True}
    if token:
        options["serverFilesCourse"] = [f"{PL_TOKEN_FOLDER}/"]
    else:
        options["environment"] = {"COURSE_SERVICE_TOKEN": "the token serve-token add printed"}
    return {"gradingMethod": "External", "externalGradingOptions": options}


def _prairielearn_readme(url: str, image: str, token: bool) -> str:
    where = (f"the file `serverFilesCourse/{PL_TOKEN_FOLDER}/{SERVICE_TOKEN}` here: copy the "
             f"folder `serverFilesCourse/{PL_TOKEN_FOLDER}/` into your PrairieLearn course's "
             "`serverFilesCourse/`; each question lists it under `serverFilesCourse`, and "
             "PrairieLearn copies it into the grading job's `/grade`" if token else
             "not here (exported without `--service-token-file`): put it in each question's "
             "`externalGradingOptions.environment` as `COURSE_SERVICE_TOKEN`, or export again "
             "with `--service-token-file` to have it copied through `serverFilesCourse`")
    return f"""\
# The CUDA course's PrairieLearn grader, through the grading service

Made by `python3 -m grader export-prairielearn --service {url}`. The image lays out
each submission and sends it to the grading service, which grades it on the course's GPUs;
the image itself needs no GPU and no CUDA, and holds no solutions and no token.

1. Build the image and push it where PrairieLearn pulls it (Docker Hub):
   `docker build -t {image} . && docker push {image}`.
2. The service's token is {where}. The course repository is readable by its staff only;
   the image, which may be public, never holds the token.
3. In each externally graded question's `info.json`, use `question-info.json`'s
   `externalGradingOptions`, with the question's exercise after `-e` (`python3 -m grader
   list` names them; one exercise per question). `enableNetworking` must be true: the
   grading container reaches the service over the network. PrairieLearn stops a grading job
   after `timeout` seconds (600 at most); the entrypoint waits {PL_WAIT_S} s for the
   service's grade, then writes results that are not gradable, saying why (the student keeps
   the attempt).

Export it again when the course's exercises change.
"""


def prairielearn_export(root: Path, out: Path, url: str, token: str | None = None,
                        image: str = PL_IMAGE) -> list[str]:
    """An external grader image recipe for PrairieLearn through the service, into out (new
    or empty): Dockerfile, course/ (the grader package, the chapters and the entrypoint),
    question-info.json, README.md, and the token, when given, in serverFilesCourse/ (never
    in the image). Returns the files written."""
    template.check_target(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def put(rel: str, text: str, mode: int = 0o644) -> None:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(mode)
        written.append(rel)

    for rel in service_files(root):
        (out / "course" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, out / "course" / rel)
        written.append(f"course/{rel}")
    put(f"course/{template.MARKER}", "A PrairieLearn grader image made by 'python3 -m grader "
        "export-prairielearn': no solutions/.\n")
    put(f"course/{PL_ENTRYPOINT}", prairielearn_entrypoint(url), 0o755)
    put("Dockerfile", _prairielearn_dockerfile(url))
    put("question-info.json",
        json.dumps(_prairielearn_question(image, token is not None), indent=2) + "\n")
    put("README.md", _prairielearn_readme(url, image, token is not None))
    if token is not None:
        put(f"serverFilesCourse/{PL_TOKEN_FOLDER}/{SERVICE_TOKEN}", token + "\n", 0o600)
    return written


def classroom_run(root: Path, folder: Path, work: Path,
                  grade: Callable[[Path], Report]) -> Report:
    """The Classroom workflow's grade through the service: the exercise files of folder (the
    student's workspace/) laid out under work/submission and graded by grade()."""
    submission = work / "submission"
    if submission.exists():
        shutil.rmtree(submission)
    submission.mkdir(parents=True)
    if not layout_upload(folder, manifest.discover(root), submission):
        raise GraderError(f"no exercise file in {folder}: the work goes in its chapter "
                          "folders, e.g. workspace/ch01_programming_model/vector_add.cu")
    return grade(submission)


def layout_upload(upload: Path, exercises: list[manifest.Exercise],
                  submission: Path) -> list[str]:
    """Copies every exercise file found anywhere in upload to submission/<chapter>/<file>
    (each file name is unique across the course); a copy under a folder named after its
    chapter wins over others. Returns the files placed."""
    placed = []
    for ex in exercises:
        for name in ex.files:
            found = sorted(p for p in upload.rglob(name)
                           if p.is_file() and "__MACOSX" not in p.parts)
            if not found:
                continue
            best = next((p for p in found if p.parent.name == ex.chapter), found[0])
            target = submission / ex.chapter / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(best, target)
            placed.append(f"{ex.chapter}/{name}")
    return placed


gradescope_layout = layout_upload  # the name it had when only Gradescope used it


def _platform_run(root: Path, upload: Path, results: Path, work: Path,
                  grade: Callable[[Path], Report], view: Callable[[Report], dict],
                  failure: Callable[[str], dict], names: list[str] = ()) -> dict:
    """Lays the upload out under work/submission, grades it with grade(submission) and writes
    the platform's results; returns what it wrote. Whatever stops the grade (no exercise file,
    no GPU, a grader that fails) still gives a results file, saying why: the platform reads
    the file, and shows only "grading failed" without one."""
    try:
        exercises = manifest.select(manifest.discover(root), list(names))
        submission = work / "submission"
        if submission.exists():
            shutil.rmtree(submission)
        submission.mkdir(parents=True)
        if not layout_upload(upload, exercises, submission):
            example = ", ".join(f for ex in exercises[:3] for f in ex.files[:1])
            data = failure(f"No exercise files found in your upload (e.g. {example}): "
                           "upload your .cu files, or your workspace/ folder.")
        else:
            data = view(grade(submission))
    except GraderError as error:
        data = failure(f"The grader could not run: {error}")
    except OSError as error:  # an unreadable upload, a full disk
        data = failure("The grader could not run: " + (f"{error.filename} " if error.filename
                                                       else "") + f"({error.strerror or error})")
    except Exception as error:  # a bug of the grader's: its trace goes to the platform's log
        traceback.print_exc()
        data = failure(f"The grader failed: {type(error).__name__}: {error}")
    render.write_atomically(results, results_text(data))
    return data


def gradescope_run(root: Path, upload: Path, results: Path, work: Path,
                   grade: Callable[[Path], Report]) -> dict:
    """Gradescope's results.json for an upload (a 0 score saying why when it cannot be
    graded); returns what it wrote."""
    return _platform_run(root, upload, results, work, grade, gradescope, gradescope_failure)


def prairielearn_run(root: Path, student: Path, results: Path, work: Path,
                     grade: Callable[[Path], Report], names: list[str] = ()) -> dict:
    """PrairieLearn's results.json for the files of /grade/student, grading the exercises
    `names` (all without); not gradable, saying why, when it cannot be graded."""
    return _platform_run(root, student, results, work, grade, prairielearn,
                         prairielearn_failure, names)


def grade_with_cli(root: Path, work: Path, sandbox: bool = True,
                   names: list[str] = ()) -> Callable[[Path], Report]:
    """A grade function running 'python3 -m grader grade' on a submission, as students do
    (only the exercises `names`, when given); the course's sandbox required unless `sandbox`
    is False (--no-sandbox). Its table goes to this process's stdout: the platform's log."""
    def grade(submission: Path) -> Report:
        report_path = work / "report.json"
        report_path.unlink(missing_ok=True)  # never an earlier submission's report
        chosen = [arg for name in names for arg in ("-e", name)]
        command = [sys.executable, "-m", "grader", "grade", str(submission), *chosen,
                   "--json", str(report_path), "-q",
                   "--require-sandbox" if sandbox else "--no-sandbox"]
        result = proc.start_retrying(lambda: subprocess.run(
            command, cwd=root, stderr=subprocess.PIPE, text=True))
        sys.stderr.write(result.stderr)
        # Exit 3: the report is there, some exercises not measured (the GPU was busy); it
        # says so per exercise, which the results show.
        if result.returncode not in (0, EXIT_INCOMPLETE) or not report_path.is_file():
            lines = result.stderr.strip().splitlines()
            raise GraderError(lines[-1].removeprefix("grader: error: ") if lines
                              else f"exit status {result.returncode}")
        return Report.load(report_path)
    return grade
