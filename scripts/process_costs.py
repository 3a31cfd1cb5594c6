#!/usr/bin/env python3
"""What a grade's programs cost, by kind: reads the process log a grade wrote when
COURSE_GRADER_PROCESS_LOG named a file (grader/proc.py) and prints, for each kind of program
(a test listing, a test run, each compute-sanitizer tool, a benchmark, a build step...), how
many ran, their seconds in all, and the shortest, median and longest run.

    COURSE_GRADER_PROCESS_LOG=build/processes.jsonl python -m grader grade solutions ...
    python scripts/process_costs.py build/processes.jsonl [--by-exercise]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def kind_of(command: list[str]) -> str:
    """The program's kind, from its command line (the sandbox's launcher left out)."""
    if "--" in command and Path(command[0]).name == "course_sandbox":
        command = command[command.index("--") + 1:]
    names = [Path(part).name for part in command]
    program = names[0] if names else ""
    if program == "compute-sanitizer":
        tool = command[command.index("--tool") + 1] if "--tool" in command else "memcheck"
        return f"sanitizer {tool}"
    if any(part == "--gtest_list_tests" for part in command):
        return "test listing"
    if program.endswith("_test"):
        return "tests"
    if program.endswith("_bench"):
        return "benchmark"
    if program.endswith("_ceilings"):
        return "ceilings"
    return program or "?"


def exercise_of(command: list[str]) -> str:
    for part in reversed(command):
        name = Path(part).name
        for suffix in ("_test", "_bench", "_ceilings"):
            if name.endswith(suffix):
                return name[: -len(suffix)]
    return ""


def summarise(lines: list[dict], by_exercise: bool) -> list[str]:
    groups: dict[str, list[float]] = defaultdict(list)
    for line in lines:
        key = kind_of(line["command"])
        if by_exercise:
            key = f"{exercise_of(line['command']) or '-'}: {key}"
        groups[key].append(line["duration_s"])
    rows = [f"{'kind':<44} {'runs':>5} {'total s':>9} {'min':>7} {'median':>7} {'max':>7}"]
    for key, times in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
        rows.append(f"{key:<44} {len(times):>5} {sum(times):>9.1f} {min(times):>7.2f} "
                    f"{statistics.median(times):>7.2f} {max(times):>7.2f}")
    total = sum(line["duration_s"] for line in lines)
    rows.append(f"{'all':<44} {len(lines):>5} {total:>9.1f}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--by-exercise", action="store_true",
                        help="one row per exercise and kind")
    args = parser.parse_args(argv)
    try:
        lines = [json.loads(text) for text in args.log.read_text().splitlines() if text.strip()]
    except (OSError, json.JSONDecodeError) as error:
        print(f"process_costs: cannot read {args.log}: {error}", file=sys.stderr)
        return 2
    print("\n".join(summarise(lines, args.by_exercise)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
