"""Views of a Report in the formats teaching platforms read, and the files that wire the
grader into them: Gradescope (results.json, and an autograder zip), PrairieLearn (external
grading results.json), GitHub Classroom (what autograding-grading-reporter reads, and the
workflow that produces it). Like render.py, nothing here re-derives a score: every number
comes from the report.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from grader import manifest, render, template
from grader.errors import EXIT_INCOMPLETE, GraderError
from grader.model import CaseStatus, ExerciseResult, ExerciseStatus, Report, StageStatus

_EPS = 1e-9
_MAX_CASES = 10        # failing cases listed per stage
_MAX_TEXT = 20000      # characters per text field (PrairieLearn caps results.json at 1 MB)


def _clip(text: str) -> str:
    if len(text) <= _MAX_TEXT:
        return text
    return text[: _MAX_TEXT // 2] + "\n... (cut; the grader's JSON report has it all) ...\n" \
        + text[-_MAX_TEXT // 2:]


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
# message/output for <pl-external-grader-results>).

def prairielearn(report: Report) -> dict:
    """results.json for PrairieLearn's external grader. A compile error makes the submission
    not gradable (the student keeps the attempt), as PrairieLearn intends for code that does
    not compile."""
    broken = [ex for ex in report.exercises if ex.status == ExerciseStatus.COMPILE_ERROR]
    tests = [{"name": ex.key, "description": ex.title, "points": round(ex.score, 3),
              "max_points": round(ex.max_score, 3), "message": ex.message,
              "output": exercise_text(ex)} for ex in report.exercises]
    if broken:
        errors = [f"{ex.key}: {ex.message or 'compilation failed'}" for ex in broken]
        return {"gradable": False, "format_errors": errors,
                "message": "Your code did not compile: " + "; ".join(errors),
                "output": _clip("\n\n".join(exercise_text(ex) for ex in broken)),
                "tests": tests}
    score = report.score / report.max_score if report.max_score else 0.0
    return {"gradable": True, "score": round(min(1.0, max(0.0, score)), 4),
            "message": f"{report.score:g}/{report.max_score:g} points "
                       f"({report.percent:.1f}%)",
            "output": _summary(report), "tests": tests}


# -------------------------------------------------------------------------- GitHub Classroom
# classroom-resources/autograding-grading-reporter reads, for each runner id in its `runners`
# input, the environment variable <ID>_RESULTS: base64 of a JSON object with status
# (pass/fail/error), max_score and tests [{name, status, score, message}]; the points it sends
# to Classroom are the sum of the tests' score over the sum of max_score (src/main.js,
# src/notify-classroom.js of github.com/classroom-resources/autograding-grading-reporter).
# The autograding-*-grader actions write that JSON as their `result` output; so does
# `python3 -m grader classroom-points`, with an exercise's points as its test's score.

CLASSROOM_REPORT = "build/classroom/report.json"


def classroom_result(report: Report | None, chapter: str, max_score: float,
                     problem: str = "") -> dict:
    """The reporter's JSON for one chapter of a report (None, with problem: no report)."""
    exercises = [ex for ex in report.exercises if ex.chapter == chapter] if report else []
    if report is not None and report.options.get("build_only"):
        # Nothing ran, so there are no points to report: an error, not a 0 that reads as one.
        exercises, problem = [], ("the grading report is of a --build-only run, which ran "
                                  "nothing: there are no points to report")
    if not exercises:
        message = problem or f"the grading report holds no exercise of {chapter}"
        return {"version": 1, "status": "error", "max_score": max_score,
                "tests": [{"name": chapter, "status": "error", "score": 0,
                           "message": message}]}
    tests = [{"name": ex.key, "status": "pass" if _full_marks(ex) else "fail",
              "score": round(ex.score, 3), "message": exercise_text(ex)} for ex in exercises]
    return {"version": 1, "status": "pass" if all(t["status"] == "pass" for t in tests)
            else "fail", "max_score": max_score, "tests": tests}


def classroom_output(result: dict) -> str:
    """The step output line ($GITHUB_OUTPUT) the reporter's <ID>_RESULTS is set from."""
    encoded = base64.b64encode(json.dumps(result).encode("utf-8")).decode("ascii")
    return f"result={encoded}"


def chapter_points(exercises: list[manifest.Exercise]) -> dict[str, float]:
    points: dict[str, float] = {}
    for ex in exercises:
        points[ex.chapter] = points.get(ex.chapter, 0.0) + ex.max_points
    return points


def classroom_workflow(exercises: list[manifest.Exercise]) -> str:
    """.github/workflows/classroom.yml: grade once, then one step per chapter turning the
    report into that chapter's points (its max score from the manifests), then the reporter."""
    points = chapter_points(exercises)
    ids = {chapter: chapter[:4] for chapter in points}
    steps = "".join(
        f"      - name: {chapter}\n"
        f"        id: {ids[chapter]}\n"
        f"        run: python3 -m grader classroom-points {CLASSROOM_REPORT} "
        f"--chapter {chapter} --max-score {score:g} >> \"$GITHUB_OUTPUT\"\n"
        for chapter, score in points.items())
    env = "".join(f"          {i.upper()}_RESULTS: \"${{{{ steps.{i}.outputs.result }}}}\"\n"
                  for i in ids.values())
    return f"""\
# GitHub Classroom autograding for the CUDA course. Generated from the exercise manifests by
# 'python3 -m grader export-template'; export again when exercises or points change.
#
# GitHub's hosted runners have no GPU, so this job runs on a self-hosted runner that has an
# NVIDIA GPU, the CUDA toolkit 12+ and Python 3.11+ (labels: self-hosted, gpu). The student's
# work is workspace/; the grader builds and runs it once, then each chapter's step reports
# that chapter's points to autograding-grading-reporter (total: {sum(points.values()):g}).
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
        # Exit 2 (the grader could not run) still lets each chapter report: with no report
        # every chapter reports an error and 0 points.
        run: bash scripts/grade.sh --json {CLASSROOM_REPORT} -q || true
{steps}      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
{env}        with:
          runners: {",".join(ids.values())}
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


def gradescope_layout(upload: Path, exercises: list[manifest.Exercise],
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


def gradescope_run(root: Path, upload: Path, results: Path, work: Path,
                   grade: Callable[[Path], Report]) -> dict:
    """Lays the upload out under work/submission, grades it with grade(submission) and
    writes Gradescope's results.json; returns what it wrote. A grader that cannot run
    (GraderError) still gives a results.json, with the reason as its output."""
    exercises = manifest.discover(root)
    submission = work / "submission"
    if submission.exists():
        shutil.rmtree(submission)
    submission.mkdir(parents=True)
    if not gradescope_layout(upload, exercises, submission):
        example = ", ".join(ex.files[0] for ex in exercises[:3])
        data = gradescope_failure(f"No exercise files found in your upload (e.g. {example}): "
                                  "upload your .cu files, or your workspace/ folder.")
    else:
        try:
            data = gradescope(grade(submission))
        except GraderError as error:
            data = gradescope_failure(f"The grader could not run: {error}")
    render.write_atomically(results, json.dumps(data, indent=2) + "\n")
    return data


def grade_with_cli(root: Path, work: Path, sandbox: bool = True) -> Callable[[Path], Report]:
    """A grade function running 'python3 -m grader grade' on a submission, as students do; the
    course's sandbox required unless `sandbox` is False (gradescope-run --no-sandbox)."""
    def grade(submission: Path) -> Report:
        report_path = work / "report.json"
        result = subprocess.run([sys.executable, "-m", "grader", "grade", str(submission),
                                 "--json", str(report_path), "-q",
                                 "--require-sandbox" if sandbox else "--no-sandbox"], cwd=root,
                                stderr=subprocess.PIPE, text=True)
        sys.stderr.write(result.stderr)
        # Exit 3: the report is there, some exercises not measured (the GPU was busy); it
        # says so per exercise, which the results show.
        if result.returncode not in (0, EXIT_INCOMPLETE) or not report_path.is_file():
            lines = result.stderr.strip().splitlines()
            raise GraderError(lines[-1] if lines else f"exit status {result.returncode}")
        return Report.load(report_path)
    return grade
