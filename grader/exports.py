"""Views of a Report in the formats teaching platforms read, and the files that wire the
grader into them: Gradescope (results.json, and an autograder zip), PrairieLearn (external
grading results.json), GitHub Classroom (what autograding-grading-reporter reads, and the
workflow that produces it). Like render.py, nothing here re-derives a score: every number
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
import shutil
import subprocess
import sys
import tempfile
import traceback
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from grader import manifest, render, template
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


def classroom_workflow(exercises: list[manifest.Exercise]) -> str:
    """.github/workflows/classroom.yml: grade once, then one step per chapter turning the
    report into that chapter's two results (its max score from the manifests), then the
    reporter."""
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
    return f"""\
# GitHub Classroom autograding for the CUDA course. Generated from the exercise manifests by
# 'python3 -m grader export-template'; export again when exercises or points change. Adding
# or editing tests in Classroom's web editor replaces this file: add none there.
#
# GitHub's hosted runners have no GPU, so this job runs on a self-hosted runner that has an
# NVIDIA GPU, the CUDA toolkit 12+ and Python 3.11+ (labels: self-hosted, gpu). The student's
# work is workspace/; the grader builds and runs it once, then each chapter's step reports
# that chapter's points to autograding-grading-reporter as two runners, what was earned and
# what was missed, in whole points, so that the totals its log prints are the points it
# sends (total: {sum(points.values()):g}).
#
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
    runs-on: [self-hosted, gpu]
    if: github.actor != 'github-classroom[bot]'
    timeout-minutes: 120
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Grade
        # Every step runs the set-up's Python (3.11+, the course's .venv): $PY goes to the
        # job's environment. CI=false keeps the set-up from installing the course's own CI
        # tools, which it does where CI=true (GitHub sets it). Exit 2 (the grader could not
        # run) still lets each chapter report: with no report, an error and 0 points.
        run: |
          CI=false . scripts/setup.sh
          echo "PY=$PY" >> "$GITHUB_ENV"
          "$PY" -m grader grade --json {CLASSROOM_REPORT} -q || true
      - name: Keep the grading report
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


def gradescope_zip(root: Path, out: Path) -> list[str]:
    """The autograder zip: setup.sh and run_autograder at its root beside the template's
    course files (no solutions); returns the names in it."""
    executable = 0o100755 << 16  # regular file, rwxr-xr-x, in the zip's Unix attributes
    # Into a temporary file beside `out`, renamed over it once whole: a failed write (a full
    # disk, a read-only folder) leaves no half zip and the old one as it was.
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(fd)
    try:
        names = _fill_zip(root, Path(tmp), executable)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as a plain write would make it, not mkstemp's 0600
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return names


def _fill_zip(root: Path, out: Path, executable: int) -> list[str]:
    names = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in (("setup.sh", GRADESCOPE_SETUP), ("run_autograder", GRADESCOPE_RUN)):
            info = zipfile.ZipInfo(name)
            info.external_attr = executable
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text)
            names.append(name)
        for rel in template.files(root):
            zf.write(root / rel, rel)
            names.append(rel)
        zf.writestr(template.MARKER, "A Gradescope autograder made by 'python3 -m grader "
                    "export-gradescope': no solutions/.\n")
        names.append(template.MARKER)
    return names


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
        result = subprocess.run([sys.executable, "-m", "grader", "grade", str(submission),
                                 *chosen, "--json", str(report_path), "-q",
                                 "--require-sandbox" if sandbox else "--no-sandbox"], cwd=root,
                                stderr=subprocess.PIPE, text=True)
        sys.stderr.write(result.stderr)
        # Exit 3: the report is there, some exercises not measured (the GPU was busy); it
        # says so per exercise, which the results show.
        if result.returncode not in (0, EXIT_INCOMPLETE) or not report_path.is_file():
            lines = result.stderr.strip().splitlines()
            raise GraderError(lines[-1].removeprefix("grader: error: ") if lines
                              else f"exit status {result.returncode}")
        return Report.load(report_path)
    return grade
