#!/usr/bin/env python3
"""What a compute-sanitizer tool costs before it checks anything: for each exercise asked, its
test program in BUILD_DIR run alone (no sandbox, one at a time) with a filter that selects no
case and with the manifest's sanitizer filter, plainly and under each of the exercise's tools
(with the sanitizer stage's options).
The difference between the two filters is what the checked cases cost; the rest is the tool's
start and the program's. Prints one row per (exercise, tool): wall seconds of each run. With
--cases TOOL, each exercise's filtered cases run under TOOL once instead, and the row names
the cases that took longest (GoogleTest's own milliseconds per case).

    python3 scripts/sanitizer_costs.py BUILD_DIR [EXERCISE ...] [--env NAME=VALUE ...]
        [--cases TOOL] [--top N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import manifest  # noqa: E402
from grader.errors import GraderError  # noqa: E402
from grader.stages.sanitizer import tool_command  # noqa: E402

NO_CASE = "NoSuchSuite.NoSuchCase"
CASE_LINE = re.compile(r"^\[\s+(?:OK|FAILED)\s+\] (\S+) \((\d+) ms\)", re.MULTILINE)


def timed(command: list[str], env: dict) -> tuple[float, int]:
    started = time.monotonic()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=600, check=False)
    return time.monotonic() - started, done.returncode


def slowest_cases(sanitizer: str, tool: str, binary: Path, gtest_filter: str, env: dict,
                  top: int) -> str:
    """One run of the filtered cases under `tool`: its wall seconds and its slowest cases."""
    started = time.monotonic()
    done = subprocess.run([*tool_command(sanitizer, tool), str(binary),
                           f"--gtest_filter={gtest_filter}"], env=env, capture_output=True,
                          text=True, errors="replace", timeout=600, check=False)
    wall = time.monotonic() - started
    cases = sorted(((int(ms), name) for name, ms in CASE_LINE.findall(done.stdout)),
                   reverse=True)
    listed = ", ".join(f"{name} {ms / 1000:.2f}" for ms, name in cases[:top])
    return (f"{wall:6.2f} s, {len(cases)} cases, {sum(ms for ms, _ in cases) / 1000:.2f} s in "
            f"cases; slowest: {listed}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("exercises", nargs="*")
    parser.add_argument("--env", action="append", default=[],
                        help="NAME=VALUE set for every run (e.g. CUDA_MODULE_LOADING=LAZY)")
    parser.add_argument("--cases", metavar="TOOL",
                        help="run each exercise's filtered cases under TOOL and name the slowest")
    parser.add_argument("--top", type=int, default=5, help="how many cases --cases names")
    args = parser.parse_args(argv)
    sanitizer = shutil.which("compute-sanitizer")
    try:
        chosen = manifest.select(manifest.discover(ROOT), args.exercises)
    except GraderError as error:
        print(f"sanitizer_costs: {error}", file=sys.stderr)
        return 2
    if sanitizer is None:
        print("sanitizer_costs: compute-sanitizer is not on PATH", file=sys.stderr)
        return 2
    env = dict(os.environ, CUDA_MODULE_LOADING="EAGER", GTEST_COLOR="no")
    env.update(item.split("=", 1) for item in args.env)
    if args.cases:
        for ex in chosen:
            binary = args.build_dir / f"{ex.name}_test"
            if args.cases in ex.sanitizer_tools and binary.exists():
                print(f"{ex.name:<36} {args.cases}: " + slowest_cases(
                    sanitizer, args.cases, binary, ex.sanitizer_filter_for(args.cases), env,
                    args.top), flush=True)
        return 0
    print(f"{'exercise':<36} {'tool':<10} {'no case s':>9} {'filter s':>9}  filter")
    for ex in chosen:
        binary = args.build_dir / f"{ex.name}_test"
        if not binary.exists():
            print(f"{ex.name:<36} no test program in {args.build_dir}")
            continue
        for tool in ("none", *ex.sanitizer_tools):
            wrapper = [] if tool == "none" else tool_command(sanitizer, tool)
            chosen_filter = ex.sanitizer_filter_for(tool if tool != "none" else "memcheck")
            empty, _ = timed([*wrapper, str(binary), f"--gtest_filter={NO_CASE}"], env)
            full, code = timed([*wrapper, str(binary), f"--gtest_filter={chosen_filter}"], env)
            print(f"{ex.name:<36} {tool:<10} {empty:>9.2f} {full:>9.2f}  {chosen_filter[:60]}"
                  + (f" (exit {code})" if code else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
