"""Markdown tables of the measurements in grader reports, for the chapters' "Measured on"
sections: every benchmark measurement of every exercise of a chapter, then the graded ratios.

    python3 scripts/measured_table.py REPORT.json [--chapter ch02]
"""

import argparse
import json
import re
import sys

parser = argparse.ArgumentParser()
parser.add_argument("report")
parser.add_argument("--chapter", default="")
parser.add_argument("--skip", default="", help="regular expression of measurement names to leave out")
args = parser.parse_args()
with open(args.report, encoding="utf-8") as f:
    data = json.load(f)
gpu = data.get("gpu") or {}
print(f"Measured on an {gpu.get('name', '?')} (compute capability "
      f"{gpu.get('compute_capability', '?')}, driver {gpu.get('driver', '?')}), grader run of "
      f"{data.get('started_at', '?')[:10]}, seed {data.get('seed')}: medians of event-timed "
      "repeats, L2 flushed between repeats.\n")
print("| exercise | measurement | median (ms) | rate |")
print("| --- | --- | ---: | ---: |")
graded = []
for ex in data["exercises"]:
    if args.chapter and not ex["chapter"].startswith(args.chapter):
        continue
    bench = next((s for s in ex["stages"] if s["name"] == "benchmark"), None)
    if bench is None:
        continue
    for m in bench.get("details", {}).get("measurements", []):
        if not m.get("valid", True) or (args.skip and re.search(args.skip, m["name"])):
            continue
        print(f"| {ex['name']} | {m['name']} | {m['median_ms']:.3f} | "
              f"{m['rate']:.1f} {m['unit']} |")
    for metric in bench.get("metrics", []):
        if metric.get("ratio") is not None:
            graded.append((ex["name"], metric))
if graded:
    print("\n| exercise | graded ratio | value | full marks at | no marks at |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, m in graded:
        print(f"| {name} | {m['measure']} / {m['baseline']} | {m['ratio']:.2f} | "
              f"{m['full_at']:g} | {m['zero_at']:g} |")
sys.exit(0)
