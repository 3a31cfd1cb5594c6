#!/usr/bin/env python3
"""Grades on a shared GPU, end to end on a GPU machine (scripts/gpu_check.sh runs each):

  concurrent SUBMISSION --alone-build DIR   one grader alone (into DIR; "none": not run), then
                                            GRADERS graders started at once on the same GPU,
                                            ROUNDS times: every report must have full marks and
                                            no accusation inferred from timing
  neighbour SUBMISSION --hog BIN --build-dir DIR
                                            a grade while BIN keeps the GPU busy: it must exit
                                            3 (incomplete), every disturbed metric must say
                                            "not measured" naming the busy process, and no
                                            point may be lost otherwise
  gpus SUBMISSION                           a class of STUDENTS copies through `batch --gpus 0`
                                            and then `batch --gpus all`: full marks both times,
                                            the second in at most MAX_RATIO of the first's time
                                            (exit 3 when the machine has one GPU)

Each prints one summary line on stdout and each problem on stderr; exit 1 when one is found.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import tools  # noqa: E402
from grader.errors import GraderError  # noqa: E402
from grader.model import ExerciseStatus, Report, StageStatus  # noqa: E402

ACCUSATIONS = ("outside the stream", "work ran on the host", "waited for the device")
EXIT_NOT_APPLICABLE = 3


def grade_command(submission: str, build_dir: Path, report: Path, seed: int,
                  only: list[str], *extra: str) -> list[str]:
    return [sys.executable, "-m", "grader", "grade", submission, "-q", "--seed", str(seed),
            "--build-dir", str(build_dir), "--json", str(report), *only, *extra]


def load(path: Path, problems: list[str]) -> Report | None:
    try:
        return Report.load(path)
    except GraderError as error:
        problems.append(str(error))
        return None


def accusations(report: Report) -> list[str]:
    """Every message of the report that says the work ran outside the stream or on the host."""
    found = []
    for ex in report.exercises:
        texts = [ex.message] + [s.message for s in ex.stages] + \
                [m.message for s in ex.stages for m in s.metrics]
        found += [f"{ex.key}: {t[:200]}" for t in texts if any(a in t for a in ACCUSATIONS)]
    return found


def full_marks(report: Report, label: str, problems: list[str]) -> None:
    for ex in report.exercises:
        if ex.score + 1e-6 < ex.max_score:
            problems.append(f"{label}: {ex.key} {ex.status} {ex.score:g}/{ex.max_score:g}: "
                            f"{ex.message[:300]}")
    problems += [f"{label}: accused: {a}" for a in accusations(report)]


def phases(report: Report) -> str:
    p = report.phases
    return (f"checks {p.get('checks_s', 0):.0f} s, benchmarks {p.get('benchmarks_s', 0):.0f} s, "
            f"waited {report.sharing.get('waited_s', 0):.0f} s")


def concurrent(args, only: list[str]) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    alone_s = 0.0
    lines = ["alone: not run (--alone-build none)"]
    if args.alone_build != "none":
        started = time.monotonic()
        alone = subprocess.run(grade_command(args.submission, Path(args.alone_build),
                                             out / "alone.json", args.seed, only),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        alone_s = time.monotonic() - started
        report = load(out / "alone.json", problems)
        if alone.returncode != 0 or report is None:
            problems.append(f"alone: exit {alone.returncode}: {alone.stderr.strip()[-300:]}")
        else:
            full_marks(report, "alone", problems)
        lines = [f"alone {alone_s:.0f} s ({phases(report) if report else 'no report'})"]
    for round_ in range(1, args.rounds + 1):
        running = []
        started = time.monotonic()
        for k in range(1, args.graders + 1):
            # At the depth of the grader's own build folders: ccache shares their objects.
            build = ROOT / "build" / "grade" / f"shared-gpu-{k}"
            path = out / f"round{round_}-grader{k}.json"
            log = open(out / f"round{round_}-grader{k}.log", "w")
            running.append((k, path, log, subprocess.Popen(
                grade_command(args.submission, build, path, args.seed + round_, only),
                stdout=log, stderr=subprocess.STDOUT)))
        walls = []
        for k, path, log, process in running:
            process.wait()
            walls.append(time.monotonic() - started)
            log.close()
            label = f"round {round_}, grader {k}"
            report = load(path, problems)
            if process.returncode != 0 or report is None:
                problems.append(f"{label}: exit {process.returncode} (see {log.name})")
                continue
            full_marks(report, label, problems)
            lines.append(f"round {round_} grader {k}: {report.score:g}/{report.max_score:g} "
                         f"in {walls[-1]:.0f} s ({phases(report)})")
        lines.append(f"round {round_}: {args.graders} at once in {max(walls):.0f} s"
                     + (f", {max(walls) / alone_s:.2f}x one alone" if alone_s else ""))
    print("\n".join(lines), file=sys.stderr)
    for problem in problems:
        print(f"check_shared_gpu: {problem}", file=sys.stderr)
    verdict = "all full marks, no accusation" if not problems else f"{len(problems)} problems"
    shown = [lines[0]] + [line for line in lines if "at once" in line]
    print(f"{args.graders} graders x {args.rounds} rounds: {verdict}; " + "; ".join(shown))
    return 1 if problems else 0


def neighbour(args, only: list[str]) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    hog = subprocess.Popen([args.hog, "900"], stdout=subprocess.PIPE, text=True)
    try:
        first = hog.stdout.readline()
        if "busy" not in first:
            print(f"check_shared_gpu: the neighbour did not start: {first!r}", file=sys.stderr)
            return 1
        path = out / "neighbour.json"
        with open(out / "neighbour.log", "w") as log:
            graded = subprocess.run(grade_command(args.submission, Path(args.build_dir), path,
                                                  args.seed, only),
                                    stdout=log, stderr=subprocess.STDOUT)
    finally:
        hog.kill()
        hog.wait()
    report = load(path, problems)
    if graded.returncode != 3:
        problems.append(f"the grade exited {graded.returncode}, not 3 (incomplete)")
    if report is None:
        return _finish(problems, "no report")
    measured = not_measured = 0
    for ex in report.exercises:
        bench = ex.stage("benchmark")
        withheld = bench.max_points if bench and bench.status == StageStatus.NOT_MEASURED else 0
        if bench is None or not bench.metrics:
            if ex.score + 1e-6 < ex.max_score:
                problems.append(f"{ex.key}: {ex.status} {ex.score:g}/{ex.max_score:g}")
            continue
        if bench.status == StageStatus.NOT_MEASURED:
            not_measured += 1
            if ex.status != ExerciseStatus.INCOMPLETE:
                problems.append(f"{ex.key}: not measured, but {ex.status}")
            for m in bench.metrics:
                if not m.message.startswith("not measured") or \
                        f"process {hog.pid}" not in m.message:
                    problems.append(f"{ex.key}/{m.name}: {m.message[:200]!r} does not say it "
                                    f"was not measured because of process {hog.pid}")
        else:
            measured += 1
            problems.append(f"{ex.key}: measured beside the neighbour ({bench.status}: "
                            f"{bench.message[:200]})")
        if ex.score + withheld + 1e-6 < ex.max_score:
            problems.append(f"{ex.key}: {ex.score:g} + {withheld:g} withheld < "
                            f"{ex.max_score:g}: points lost silently ({ex.message[:200]})")
    problems += [f"accused: {a}" for a in accusations(report)]
    return _finish(problems, f"{not_measured} benchmarks not measured beside process {hog.pid}"
                             f" (exit {graded.returncode}), {measured} measured; "
                             f"{report.score:g}/{report.max_score:g} with the rest withheld")


def gpus(args, only: list[str]) -> int:
    found = tools.list_gpus()
    if len(found) < 2:
        print(f"one GPU here ({len(found)} found): batch --gpus all is no faster")
        return EXIT_NOT_APPLICABLE
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    roster = out / "class"
    for k in range(1, args.students + 1):
        shutil.copytree(args.submission, roster / f"student{k}")
    problems: list[str] = []
    times = {}
    for label, which in (("one", "0"), ("all", "all")):
        started = time.monotonic()
        batch = subprocess.run([sys.executable, "-m", "grader", "batch", str(roster), "--out",
                                str(out / label), "--gpus", which, "--seed", str(args.seed),
                                *only], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
        times[label] = time.monotonic() - started
        (out / f"{label}.log").write_text(batch.stdout)
        if batch.returncode != 0:
            problems.append(f"batch --gpus {which}: exit {batch.returncode}: "
                            f"{batch.stdout.strip()[-300:]}")
        for report_path in sorted((out / label / "reports").glob("*.json")):
            report = load(report_path, problems)
            if report is not None:
                full_marks(report, f"--gpus {which} {report_path.stem}", problems)
    ratio = times["all"] / times["one"]
    if ratio > args.max_ratio:
        problems.append(f"--gpus all took {ratio:.2f} of one GPU's time (at most "
                        f"{args.max_ratio})")
    return _finish(problems, f"{args.students} students: one GPU {times['one']:.0f} s, "
                             f"{len(found)} GPUs {times['all']:.0f} s ({ratio:.2f}x)")


def _finish(problems: list[str], summary: str) -> int:
    for problem in problems:
        print(f"check_shared_gpu: {problem}", file=sys.stderr)
    print(summary + ("" if not problems else f"; {len(problems)} problems"))
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="check", required=True)
    for name in ("concurrent", "neighbour", "gpus"):
        p = sub.add_parser(name)
        p.add_argument("submission")
        p.add_argument("--out", required=True)
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("-e", "--exercise", action="append", default=[])
        if name == "concurrent":
            p.add_argument("--alone-build", required=True)
            p.add_argument("--graders", type=int, default=3)
            p.add_argument("--rounds", type=int, default=1)
        elif name == "neighbour":
            p.add_argument("--hog", required=True)
            p.add_argument("--build-dir", required=True)
        else:
            p.add_argument("--students", type=int, default=4)
            p.add_argument("--max-ratio", type=float, default=0.6)
    args = parser.parse_args()
    only = [flag for e in args.exercise for flag in ("-e", e)]
    return {"concurrent": concurrent, "neighbour": neighbour, "gpus": gpus}[args.check](args,
                                                                                         only)


if __name__ == "__main__":
    sys.exit(main())
