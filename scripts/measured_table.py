"""Markdown tables of the measurements in grader reports, for the chapters' "Measured on"
sections: every benchmark measurement of every exercise of a chapter, then the graded ratios.

    python3 scripts/measured_table.py REPORT.json [--chapter ch02]
"""

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.errors import GraderError  # noqa: E402
from grader.model import Report  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("report")
parser.add_argument("--chapter", default="")
parser.add_argument("--skip", default="", help="regular expression of measurement names to leave out")
args = parser.parse_args()
try:
    report = Report.load(Path(args.report))
except GraderError as error:
    sys.exit(f"measured_table: {error}")
gpu = report.gpu
print(f"Measured on an {gpu.name if gpu else '?'} (compute capability "
      f"{gpu.compute_capability if gpu else '?'}, driver {gpu.driver if gpu else '?'}), grader "
      f"run of {report.started_at[:10]}, seed {report.seed}: medians of event-timed "
      "repeats, L2 flushed between repeats.\n")
print("| exercise | measurement | median (ms) | rate |")
print("| --- | --- | ---: | ---: |")
graded = []
for ex in report.exercises:
    if args.chapter and not ex.chapter.startswith(args.chapter):
        continue
    bench = ex.stage("benchmark")
    if bench is None:
        continue
    # The benchmark's own JSON entries, kept as they came.
    for m in bench.details.get("measurements", []):
        if not m.get("valid", True) or (args.skip and re.search(args.skip, m["name"])):
            continue
        print(f"| {ex.name} | {m['name']} | {m['median_ms']:.3f} | "
              f"{m['rate']:.1f} {m['unit']} |")
    graded += [(ex.name, metric) for metric in bench.metrics if metric.ratio is not None]
if graded:
    print("\n| exercise | graded ratio | value | full marks at | no marks at |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, m in graded:
        print(f"| {name} | {m.measure} / {m.baseline} | {m.ratio:.2f} | "
              f"{m.full_at:g} | {m.zero_at:g} |")
sys.exit(0)
