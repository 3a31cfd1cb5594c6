"""Checks on a grader JSON report, for scripts: --all-compiled fails (exit 1) when an
exercise did not compile or was not submitted, naming each."""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.errors import GraderError  # noqa: E402
from grader.model import Report, StageStatus  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("report")
parser.add_argument("--all-compiled", action="store_true")
args = parser.parse_args()
try:
    report = Report.load(Path(args.report))
except GraderError as error:
    sys.exit(f"check_report: {error}")
bad = []
if args.all_compiled:
    for ex in report.exercises:
        build = ex.stage("build")
        if build is None or build.status != StageStatus.PASSED:
            bad.append(f"{ex.key}: {ex.status} {ex.message}")
            if build and build.output:
                bad.append(build.output)
print(f"{args.report}: {len(report.exercises)} exercises, "
      f"{'all compiled' if not bad else 'problems:'}")
for line in bad:
    print("  " + line)
sys.exit(1 if bad else 0)
