#!/usr/bin/env python3
"""Grades the fixtures under tests/fixtures/submissions as one class through `grader batch`
(students at once, each in the sandbox batch requires), then checks each fixture's report
against its expect.toml, as tests/test_fixtures_gpu.py does one fixture at a time. The same
class may hold solutions/ (every exercise must earn full marks) and skeletons/ (every exercise
compiles and earns no correctness point). Much faster than one cold grade per fixture: the
students' builds and checks overlap, and their benchmarks still take the GPU alone. A fixture
with patches is graded as its materialised copy (tests/fixture_files.py).

    check_fixture_class.py OUT [--fixtures a,b | all] [--solutions] [--skeletons] [--jobs N]
                           [--seed S] [--rounds R]

--rounds R grades the class R times, each into OUT/round-<k> (a verdict must hold in every
round). Prints one line per student and round, then a summary line; exit status 1 when any
report differs from what is expected.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import fixture_expect  # noqa: E402
import fixture_files  # noqa: E402


def roster(args) -> list[tuple[str, Path, Path | None]]:
    """(student, the folder graded, the fixture whose expect.toml it meets) of each student."""
    if args.fixtures == "all":
        os.environ.pop("COURSE_FIXTURES", None)
    else:
        os.environ["COURSE_FIXTURES"] = args.fixtures
    students = [(d.name, fixture_files.submission(d), d) for d in fixture_expect.fixture_dirs()]
    if args.solutions:
        students.append(("solutions", ROOT / "solutions", None))
    if args.skeletons:
        students.append(("skeletons", ROOT / "skeletons", None))
    return students


def check(student: str, fixture: Path | None, report: dict) -> list[str]:
    graded = {e["name"]: e for e in report["exercises"]}
    if student == "solutions":
        return [f"{n}: {e['status']} {e['score']}/{e['max_score']}" for n, e in graded.items()
                if e["score"] != e["max_score"]]
    if student == "skeletons":
        return [f"{n}: {e['status']} {e['score']}/{e['max_score']} (a skeleton must compile "
                "and earn nothing)" for n, e in graded.items()
                if e["status"] in ("compile_error", "rejected") or e["score"]]
    problems = []
    for name, spec in fixture_expect.load(fixture)["exercises"].items():
        if name not in graded:
            problems.append(f"{name}: not in the report")
        else:
            problems += fixture_expect.mismatches(spec, graded[name])
    return problems


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--fixtures", default="all")
    parser.add_argument("--solutions", action="store_true")
    parser.add_argument("--skeletons", action="store_true")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    students = roster(args)
    args.out.mkdir(parents=True, exist_ok=True)
    roster_file = args.out / "roster.csv"
    with roster_file.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "path"])
        writer.writerows([s, str(p)] for s, p, _ in students)
    failed = 0
    for k in range(1, args.rounds + 1):
        out = args.out / f"round-{k}"
        command = [sys.executable, "-m", "grader", "batch", str(roster_file), "--out", str(out),
                   "--jobs", str(args.jobs), "--seed", str(int(args.seed) + k)]
        batch = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        (args.out / f"batch-{k}.log").write_text(batch.stdout + batch.stderr)
        if not (out / "reports").is_dir():
            print(f"round {k}: batch wrote no report (exit {batch.returncode}): "
                  + " | ".join((batch.stdout + batch.stderr).strip().splitlines()[-3:]))
        for student, _, fixture in students:
            report_path = out / "reports" / f"{student}.json"
            if not report_path.is_file():
                failed += 1
                why = (out / "failed" / f"{student}.json")
                print(f"round {k} {student}: NO REPORT "
                      f"{why.read_text()[:300] if why.is_file() else ''}")
                continue
            report = json.loads(report_path.read_text())
            problems = check(student, fixture, report)
            sandbox = report.get("sandbox", {}).get("status")
            if sandbox != "on":
                problems.append(f"sandbox {sandbox}")
            failed += bool(problems)
            print(f"round {k} {student}: " + ("ok" if not problems else "; ".join(problems))
                  + f" ({report['score']:g}/{report['max_score']:g})")
    total = len(students) * args.rounds
    print(f"check_fixture_class: {total - failed} of {total} reports as expected "
          f"({len(students)} students, {args.rounds} round{'s' if args.rounds != 1 else ''})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
