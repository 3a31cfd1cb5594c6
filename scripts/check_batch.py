#!/usr/bin/env python3
"""Batch grading end to end on a GPU machine: a class of five submissions (the solutions, the
skeletons, two known-bad fixtures and a student who handed in one file of the chapter) graded by
`grader batch`, stopped with SIGTERM once the first report is written, then resumed.

Checks, each failing loudly (exit 1, one line per problem on stderr):
  * the stopped run exits 130 and leaves only whole files (every report loads);
  * the resumed run exits 0, grades only the students left (finished reports untouched) and
    ends with every student graded;
  * gradebook.csv has one row per student whose total equals the total of that student's
    report, and its exercise columns equal the report's exercise scores;
  * the solutions earn full marks, the skeletons no correctness points, the fixtures what
    their expect.toml says (status), the one-file student full marks for that file and
    "not submitted" for the rest;
  * leaderboard.csv ranks each metric's ratios best first.

Usage: scripts/check_batch.py OUT_DIR [-e EXERCISE ...] [--seed N]   (default -e ch01)
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import fixture_files  # noqa: E402
from grader.model import Report  # noqa: E402

FIXTURES = fixture_files.FIXTURES
STUDENTS = {  # student id -> folder copied into the class
    "alice_solutions": ROOT / "solutions",
    "bob_skeletons": ROOT / "skeletons",
    "carol_broken_mix": FIXTURES / "ch01_broken_mix",
    "dave_poor_launch": FIXTURES / "ch01_poor_launch",
    "erin_one_file": ROOT / "solutions",  # only ONE_FILE of it
}
ONE_FILE = Path("ch01_programming_model") / "vector_add.cu"
STOP_TIMEOUT_S = 900


def make_class(where: Path) -> None:
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    for student, source in STUDENTS.items():
        if student == "erin_one_file":
            (where / student / ONE_FILE).parent.mkdir(parents=True)
            shutil.copy(source / ONE_FILE, where / student / ONE_FILE)
        elif source.parent == FIXTURES:  # its patches applied, without its expect.toml
            fixture_files.materialise(source, where / student)
        else:
            shutil.copytree(source, where / student,
                            ignore=shutil.ignore_patterns("expect.toml", ".generated"))


def batch_command(roster: Path, out: Path, exercises: list[str], seed: int) -> list[str]:
    command = [sys.executable, "-m", "grader", "batch", str(roster), "--out", str(out),
               "--seed", str(seed)]
    for e in exercises:
        command += ["-e", e]
    return command


def complete_reports(out: Path) -> dict[str, Report]:
    reports = {}
    for path in sorted((out / "reports").glob("*.json")):
        report = Report.load(path)  # raises on a torn file: that is a failure too
        if report.finished_at:
            reports[path.stem] = report
    return reports


def run_and_stop(command: list[str], out: Path, log: Path) -> tuple[int, set[str]]:
    """Starts the batch, sends SIGTERM once one report is complete; (exit status, done)."""
    with log.open("w") as sink:
        batch = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline and batch.poll() is None:
            if (out / "reports").is_dir() and complete_reports(out):
                break
            time.sleep(1)
        if batch.poll() is None:
            batch.send_signal(signal.SIGTERM)  # the batch process only: it ends its children
        code = batch.wait(timeout=120)
    return code, set(complete_reports(out))


def check(out: Path, problems: list[str]) -> str:
    reports = complete_reports(out)
    missing = set(STUDENTS) - set(reports)
    if missing:
        problems.append(f"students without a complete report: {', '.join(sorted(missing))}")
    with (out / "gradebook.csv").open(newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    if set(rows) != set(STUDENTS):
        problems.append(f"gradebook rows {sorted(rows)} != students {sorted(STUDENTS)}")
    for student, report in reports.items():
        row = rows.get(student)
        if row is None:
            continue
        if abs(float(row["total"]) - report.score) > 0.01:
            problems.append(f"{student}: gradebook total {row['total']} != report {report.score}")
        for ex in report.exercises:
            if ex.name in row and abs(float(row[ex.name] or 0) - ex.score) > 0.01:
                problems.append(f"{student}/{ex.name}: gradebook {row[ex.name]} != "
                                f"report {ex.score}")
        if row["status"] != "graded":
            problems.append(f"{student}: gradebook status {row['status']!r}")

    def exercises(student):
        return reports[student].exercises if student in reports else []

    for ex in exercises("alice_solutions"):
        if ex.score < ex.max_score - 0.01:
            problems.append(f"solutions/{ex.name}: {ex.score}/{ex.max_score} ({ex.message})")
    for ex in exercises("bob_skeletons"):
        tests = next((s for s in ex.stages if s.name == "tests"), None)
        if ex.status == "compile_error" or (tests and tests.points > 0):
            problems.append(f"skeletons/{ex.name}: {ex.status}, tests "
                            f"{tests.points if tests else '-'} points")
    for student in ("carol_broken_mix", "dave_poor_launch"):
        expect = tomllib.loads((STUDENTS[student] / "expect.toml").read_text())
        for ex in exercises(student):
            want = expect.get("exercises", {}).get(ex.name, {}).get("status")
            if want and ex.status not in want:
                problems.append(f"{student}/{ex.name}: status {ex.status}, expected {want}")
    for ex in exercises("erin_one_file"):
        handed_in = ex.chapter == ONE_FILE.parent.name and ex.name == ONE_FILE.stem
        if handed_in and ex.score < ex.max_score - 0.01:
            problems.append(f"erin_one_file/{ex.name}: {ex.score}/{ex.max_score} ({ex.message})")
        if not handed_in and (ex.score != 0 or ex.status != "not_submitted"):
            problems.append(f"erin_one_file/{ex.name}: {ex.status}, {ex.score} points for a "
                            "file not handed in")

    with (out / "leaderboard.csv").open(newline="") as f:
        board = list(csv.DictReader(f))
    by_metric: dict = {}
    for row in board:
        by_metric.setdefault((row["exercise"], row["metric"]), []).append(float(row["ratio"]))
    for key, ratios in by_metric.items():
        if ratios != sorted(ratios, reverse=True):
            problems.append(f"leaderboard {key}: not best first {ratios}")
    if not board:
        problems.append("leaderboard.csv is empty: nobody's benchmark ran")
    totals = ", ".join(f"{s} {reports[s].score:g}/{reports[s].max_score:g}"
                       for s in STUDENTS if s in reports)
    return f"{len(reports)} students graded; {len(board)} leaderboard rows; {totals}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("-e", "--exercise", action="append", dest="exercises")
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    exercises = args.exercises or ["ch01"]
    work = args.out.resolve()
    roster, out = work / "class", work / "batch"
    make_class(roster)
    shutil.rmtree(out, ignore_errors=True)
    command = batch_command(roster, out, exercises, args.seed)
    problems: list[str] = []

    code, done = run_and_stop(command, out, work / "batch-stopped.log")
    if code != 130:
        problems.append(f"the stopped batch exited {code}, expected 130 (logs: batch-stopped.log)")
    if not done or done == set(STUDENTS):
        problems.append(f"the stop came at the wrong time: {len(done)} students done")
    kept = {s: (out / "reports" / f"{s}.json").stat().st_mtime_ns for s in done}

    with (work / "batch-resumed.log").open("w") as sink:
        code = subprocess.run(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT).returncode
    if code != 0:
        problems.append(f"the resumed batch exited {code}, expected 0 (logs: batch-resumed.log)")
    for student, mtime in kept.items():
        if (out / "reports" / f"{student}.json").stat().st_mtime_ns != mtime:
            problems.append(f"{student}: graded again on resume")
    summary = check(out, problems)
    print(f"stopped after {len(done)} of {len(STUDENTS)}, resumed; {summary}")
    for p in problems:
        print(f"check_batch: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
