"""What a student waits for after changing one exercise: for every exercise of the chapters
asked, a comment is appended to its file in SUBMISSION (a copy the caller owns) and that
exercise alone is graded again into BUILD_DIR, as a student's `grade -e NAME` would. Those
exercises are built first, untimed, with BUILD_DIR configured for SUBMISSION. Prints one row per
exercise (wall seconds from starting the grader to its exit, points, the report's phases), then
the slowest and the median. Exit status 1 when an exercise took longer than --limit seconds, the
median is over --median-limit, or an exercise lost points (with --build-only: did not compile),
2 on bad arguments.

    python3 scripts/incremental_times.py SUBMISSION BUILD_DIR [--chapters ch01 ch02]
        [--exercises NAME ...] [--limit 12] [--median-limit 8] [--seed N] [--json-dir DIR]
        [--build-only]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import manifest  # noqa: E402
from grader.errors import GraderError  # noqa: E402
from grader.model import Report  # noqa: E402


def grade(submission: Path, build_dir: Path, names: list[str], seed: int, build_only: bool,
          report: Path) -> subprocess.CompletedProcess:
    """`grader grade` of the named exercises, as a student would run it."""
    command = [sys.executable, "-m", "grader", "grade", str(submission), "-q",
               "--seed", str(seed), "--build-dir", str(build_dir), "--json", str(report)]
    for name in names:
        command += ["-e", name]
    if build_only:
        command.append("--build-only")
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("submission", type=Path)
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--chapters", nargs="+", default=["ch"], help="chapter prefixes "
                        "(default: every chapter)")
    parser.add_argument("--exercises", nargs="+", default=None, help="only these exercises")
    parser.add_argument("--build-only", action="store_true",
                        help="build without running (the timing of a machine without a GPU)")
    parser.add_argument("--limit", type=float, default=12.0,
                        help="most seconds any one exercise may take")
    parser.add_argument("--median-limit", type=float, default=None,
                        help="most seconds the median exercise may take")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json-dir", type=Path, default=None,
                        help="keep each exercise's report here")
    args = parser.parse_args()
    if not args.submission.is_dir():
        print(f"incremental_times: no submission folder {args.submission}", file=sys.stderr)
        return 2
    chosen = [ex for ex in manifest.discover(ROOT)
              if any(ex.chapter.startswith(c) for c in args.chapters)
              and (args.exercises is None or ex.name in args.exercises)]
    if not chosen:
        print(f"incremental_times: no exercise in {' '.join(args.chapters)}", file=sys.stderr)
        return 2
    if args.json_dir:
        args.json_dir.mkdir(parents=True, exist_ok=True)
    args.build_dir.mkdir(parents=True, exist_ok=True)
    # Untimed: the build directory configured for this submission and everything built, as a
    # student's own is before the change (a build directory last configured for another
    # folder would charge the first exercise a reconfigure no student waits for).
    first = grade(args.submission, args.build_dir, [ex.name for ex in chosen], args.seed,
                  True, args.build_dir / "incremental-first-build.json")
    if first.returncode != 0:
        print(f"incremental_times: the first build failed:\n{first.stdout[-2000:]}",
              file=sys.stderr)
        return 1
    rows, problems = [], []
    for ex in chosen:
        student_file = args.submission / ex.chapter / ex.files[0]
        if not student_file.is_file():
            problems.append(f"{ex.name}: no {student_file}")
            continue
        with student_file.open("a") as f:
            f.write("// changed again\n")
        report = (args.json_dir or args.build_dir) / f"incremental-{ex.name}.json"
        started = time.monotonic()
        done = grade(args.submission, args.build_dir, [ex.name], args.seed, args.build_only,
                     report)
        wall = time.monotonic() - started
        try:
            graded = Report.load(report)
            points, most = graded.score, graded.max_score
            phases = ", ".join(f"{k.removesuffix('_s')} {v:.1f}"
                               for k, v in graded.phases.items())
        except GraderError:
            points, most, phases = 0.0, 0.0, f"no report (exit {done.returncode})"
        rows.append((ex.name, wall, points, most, phases))
        print(f"{ex.name:40s} {wall:6.1f} s  {points:g}/{most:g}  ({phases})", flush=True)
        if wall > args.limit:
            problems.append(f"{ex.name}: {wall:.1f} s, over {args.limit:g} s")
        if args.build_only:
            if done.returncode != 0:
                problems.append(f"{ex.name}: did not build (exit {done.returncode})")
        elif most == 0 or points < most:
            problems.append(f"{ex.name}: {points:g}/{most:g} points")
    if rows:
        slowest = max(rows, key=lambda r: r[1])
        median = statistics.median(r[1] for r in rows)
        print(f"slowest: {slowest[0]} {slowest[1]:.1f} s of {len(rows)} exercises; "
              f"median {median:.1f} s")
        if args.median_limit is not None and median > args.median_limit:
            problems.append(f"median {median:.1f} s, over {args.median_limit:g} s")
    for p in problems:
        print(f"incremental_times: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
