#!/usr/bin/env python3
"""What the course's tests cost in CPU time: reads the file that pytest's --cpu-costs option
(tests/conftest.py) wrote and prints each test module's CPU and wall seconds, then the tests
that took the most CPU. On CI's two cores the suite is bound by the CPU, so a test's CPU time,
its own and that of the programs it waited for, is what it costs the run.

    .venv/bin/python -m pytest tests -n 4 --dist loadfile --cpu-costs build/test-costs.jsonl
    python scripts/test_costs.py build/test-costs.jsonl [--top N]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def module_of(test: str) -> str:
    return test.split("::", 1)[0]


def summarise(lines: list[dict], top: int) -> list[str]:
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for line in lines:
        row = modules[module_of(line["test"])]
        row[0] += line["cpu_s"]
        row[1] += line["wall_s"]
        row[2] += 1
    rows = [f"{'module':<52} {'tests':>5} {'CPU s':>8} {'wall s':>8}"]
    for name, (cpu, wall, count) in sorted(modules.items(), key=lambda kv: -kv[1][0]):
        rows.append(f"{name:<52} {count:>5} {cpu:>8.1f} {wall:>8.1f}")
    cpu = sum(line["cpu_s"] for line in lines)
    wall = sum(line["wall_s"] for line in lines)
    rows.append(f"{'all':<52} {len(lines):>5} {cpu:>8.1f} {wall:>8.1f}")
    if top > 0:
        rows += ["", f"{'CPU s':>8} {'wall s':>8}  the {top} tests that took the most CPU"]
        for line in sorted(lines, key=lambda line: -line["cpu_s"])[:top]:
            rows.append(f"{line['cpu_s']:>8.1f} {line['wall_s']:>8.1f}  {line['test']}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("costs", type=Path, help="the file --cpu-costs wrote")
    parser.add_argument("--top", type=int, default=15, metavar="N",
                        help="list the N tests that took the most CPU (default 15; 0: none)")
    args = parser.parse_args(argv)
    try:
        lines = [json.loads(text) for text in args.costs.read_text().splitlines()
                 if text.strip()]
    except (OSError, json.JSONDecodeError) as error:
        print(f"test_costs: cannot read {args.costs}: {error}", file=sys.stderr)
        return 2
    fields = {"test", "cpu_s", "wall_s"}
    incomplete = [line for line in lines if not isinstance(line, dict) or fields - line.keys()]
    if incomplete:
        print(f"test_costs: cannot read {args.costs}: a line without "
              f"{', '.join(sorted(fields))}: {incomplete[0]}", file=sys.stderr)
        return 2
    print("\n".join(summarise(lines, args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
