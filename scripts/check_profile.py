"""Checks the reports of `grade --profile` for scripts/gpu_check.sh's profile stage; exit 1
naming what failed.

  check_profile.py solutions REPORT        every profiled exercise's profile stage passed, its
                                           grade equals the one without profiling (full marks)
  check_profile.py fixture NAME REPORT     the counter that explains why the fixture is slow
                                           (EXPLAINED_BY) came out worse than the reference's

The last line printed is the summary: exercises profiled and the seconds profiling added.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.errors import GraderError  # noqa: E402
from grader.model import Report, StageName, StageStatus  # noqa: E402

# Fixtures slow for a taught reason, and the counter each one must show.
EXPLAINED_BY = {
    "ch04_transpose_unpadded": ("transpose_shared", "shared_wavefronts_per_request"),
    "ch04_transpose_without_shared": ("transpose_shared", "global_sectors_per_request"),
    "ch01_poor_launch": ("vector_add", "achieved_occupancy_pct"),
}


def _profiles(report: Report):
    for ex in report.exercises:
        stage = ex.stage(StageName.PROFILE)
        if stage is not None:
            yield ex, stage


def _added_s(report: Report) -> float:
    return sum(stage.details.get("added_s", stage.duration_s) or 0.0
               for _, stage in _profiles(report))


def check_solutions(report: Report) -> list[str]:
    bad = []
    profiled = list(_profiles(report))
    if not profiled:
        bad.append("no exercise has a profile stage")
    for ex, stage in profiled:
        if stage.status != StageStatus.PASSED:
            bad.append(f"{ex.key}: profile {stage.status}: {stage.message}")
        elif not stage.details.get("comparisons"):
            bad.append(f"{ex.key}: profile passed with no comparison")
        if ex.score + 1e-9 < ex.max_score:
            bad.append(f"{ex.key}: {ex.score:g}/{ex.max_score:g} with --profile")
    print(f"{len(profiled)} exercises profiled, {_added_s(report):.1f} s of profiling")
    return bad


def check_fixture(name: str, report: Report) -> list[str]:
    if name not in EXPLAINED_BY:
        return [f"no counter is expected for fixture {name}"]
    exercise, counter = EXPLAINED_BY[name]
    ex = next((e for e in report.exercises if e.name == exercise), None)
    stage = ex.stage(StageName.PROFILE) if ex else None
    if stage is None:
        return [f"{name}: {exercise} has no profile stage"]
    rows = [c for c in stage.details.get("comparisons", []) if c.get("counter") == counter]
    if not rows:
        return [f"{name}: {exercise} has no {counter} comparison ({stage.status}: "
                f"{stage.message})"]
    worse = [c for c in rows if c.get("verdict") == "worse"]
    for c in rows:
        print(f"{name}: {c.get('measure')} {counter}: student {c.get('student')} reference "
              f"{c.get('reference')} baseline {c.get('baseline')} -> {c.get('verdict')}")
    print(f"{name}: {_added_s(report):.1f} s of profiling")
    return [] if worse else [f"{name}: {counter} is not worse than the reference's"]


def main(argv: list[str]) -> int:
    try:
        if len(argv) == 2 and argv[0] == "solutions":
            bad = check_solutions(Report.load(Path(argv[1])))
        elif len(argv) == 3 and argv[0] == "fixture":
            bad = check_fixture(argv[1], Report.load(Path(argv[2])))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except GraderError as error:
        print(f"check_profile: {error}", file=sys.stderr)
        return 2
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
