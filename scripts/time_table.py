"""Where the time of a grade went, from its report: per chapter, the seconds each stage took
(summed over the chapter's exercises), then the grade's wall time. In a parallel grade the
untimed stages of several exercises overlap, so their sums exceed the wall time they took.

    python3 scripts/time_table.py REPORT.json
"""

import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.errors import GraderError  # noqa: E402
from grader.model import Report  # noqa: E402

STAGES = ("tests", "sanitizer", "benchmark", "technique")

if len(sys.argv) != 2:
    sys.exit(__doc__.strip().splitlines()[-1].strip())
try:
    report = Report.load(Path(sys.argv[1]))
except GraderError as error:
    sys.exit(f"time_table: {error}")

seconds = defaultdict(lambda: defaultdict(float))
counts = defaultdict(int)
for ex in report.exercises:
    counts[ex.chapter] += 1
    for stage in ex.stages:
        if stage.name in STAGES:
            seconds[ex.chapter][stage.name] += stage.duration_s

print("| chapter | exercises | " + " | ".join(f"{s} (s)" for s in STAGES) + " | total (s) |")
print("| --- | ---: | " + " | ".join("---:" for _ in STAGES) + " | ---: |")
total = defaultdict(float)
for chapter in sorted(counts):
    row = [seconds[chapter][s] for s in STAGES]
    for s, v in zip(STAGES, row):
        total[s] += v
    print(f"| {chapter} | {counts[chapter]} | " + " | ".join(f"{v:.0f}" for v in row)
          + f" | {sum(row):.0f} |")
row = [total[s] for s in STAGES]
print(f"| all | {sum(counts.values())} | " + " | ".join(f"{v:.0f}" for v in row)
      + f" | {sum(row):.0f} |")
if report.started_at and report.finished_at:
    wall = (datetime.fromisoformat(report.finished_at)
            - datetime.fromisoformat(report.started_at)).total_seconds()
    phases = ", ".join(f"{k.removesuffix('_s')} {v:.0f} s" for k, v in report.phases.items())
    print(f"\nwall {wall:.0f} s ({phases or 'phases not recorded'}); "
          f"{report.score:g}/{report.max_score:g} points; options {report.options}")
