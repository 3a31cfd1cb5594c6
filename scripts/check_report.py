"""Checks on a grader JSON report, for scripts: --all-compiled fails (exit 1) when an
exercise did not compile or was not submitted, naming each."""

import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("report")
parser.add_argument("--all-compiled", action="store_true")
args = parser.parse_args()
try:
    with open(args.report, encoding="utf-8") as f:
        data = json.load(f)
except (OSError, json.JSONDecodeError) as error:
    sys.exit(f"check_report: cannot read {args.report}: {error}")
bad = []
if args.all_compiled:
    for ex in data["exercises"]:
        build = next((s for s in ex["stages"] if s["name"] == "build"), None)
        if build is None or build["status"] != "passed":
            bad.append(f"{ex['key']}: {ex['status']} {ex['message']}")
            if build and build.get("output"):
                bad.append(build["output"])
print(f"{args.report}: {len(data['exercises'])} exercises, "
      f"{'all compiled' if not bad else 'problems:'}")
for line in bad:
    print("  " + line)
sys.exit(1 if bad else 0)
