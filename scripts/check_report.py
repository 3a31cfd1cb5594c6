"""Checks on a grader JSON report, for scripts; exit 1 naming each exercise that fails one.

  --all-compiled    every exercise was submitted, compiled, and passed the integrity check
  --full-marks      every exercise earned all its points (reference solutions)
  --no-correctness  no exercise earned correctness points (skeletons: no test may pass on them)
  --techniques      every technique rule was checked and met (reference solutions, even
                    with --build-only, since the rules need no GPU)
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.errors import GraderError  # noqa: E402
from grader.model import Report, StageStatus  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("report")
parser.add_argument("--all-compiled", action="store_true")
parser.add_argument("--full-marks", action="store_true")
parser.add_argument("--no-correctness", action="store_true")
parser.add_argument("--techniques", action="store_true")
args = parser.parse_args()
try:
    report = Report.load(Path(args.report))
except GraderError as error:
    sys.exit(f"check_report: {error}")
bad = []
passed = []
if args.all_compiled or not (args.full_marks or args.no_correctness or args.techniques):
    passed.append("all compiled")
    if args.all_compiled:
        for ex in report.exercises:
            build = ex.stage("build")
            if build is None or build.status != StageStatus.PASSED:
                bad.append(f"{ex.key}: {ex.status} {ex.message}")
                if build and build.output:
                    bad.append(build.output)
            integrity = ex.stage("integrity")
            if build is not None and build.status == StageStatus.PASSED and (
                    integrity is None or integrity.status != StageStatus.PASSED):
                bad.append(f"{ex.key}: integrity "
                           f"{integrity.status if integrity else 'missing'}: "
                           f"{integrity.message if integrity else ''}")
if args.full_marks:
    passed.append("all full marks")
    for ex in report.exercises:
        if ex.score + 1e-9 < ex.max_score:
            bad.append(f"{ex.key}: {ex.score:g}/{ex.max_score:g} ({ex.status}) {ex.message}")
if args.no_correctness:
    passed.append("no correctness points")
    for ex in report.exercises:
        tests = ex.stage("tests")
        if tests is not None and tests.points > 0:
            bad.append(f"{ex.key}: {tests.points:g} correctness points "
                       f"({tests.details.get('passed', '?')} cases passed)")
if args.techniques:
    passed.append("all technique rules met")
    for ex in report.exercises:
        technique = ex.stage("technique")
        if technique is not None and technique.status != StageStatus.PASSED:
            bad.append(f"{ex.key}: technique {technique.status}: {technique.message}")
print(f"{args.report}: {len(report.exercises)} exercises, "
      f"{', '.join(passed) if not bad else 'problems:'}")
for line in bad:
    print("  " + line)
sys.exit(1 if bad else 0)
