"""How long each exercise's checks took in a build folder's last grade, so that the next grade
there builds and starts the longest first (grader/pipeline.py): with several exercises at
once, a long one started last keeps every other worker waiting for it at the end. Before a
folder has times, expected() estimates them from each manifest's sanitizer tools.

The file (CHECK_TIMES in the build folder) maps an exercise's name to the seconds its untimed
stages ran among the others (the timeline's rows that are not the benchmark's, not runs again
alone); a grade of some exercises updates theirs and keeps the rest. It only orders work: a
missing or unreadable file leaves the estimates, and nothing in it reaches a score.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from grader.manifest import Exercise

CHECK_TIMES = "grader-check-times.json"
UNTIMED = ("integrity", "technique", "tests", "sanitizer")


def load(build_dir: Path) -> dict[str, float]:
    try:
        data = json.loads((Path(build_dir) / CHECK_TIMES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)}


# Seconds an exercise's checks take among the others before its build folder has timed them
# (an H200's cold grade, docs/measurements/grading_speed.md): its tests, each sanitizer tool's
# run, and racecheck's slower one on top.
_TESTS_S, _TOOL_S, _RACECHECK_EXTRA_S = 2.5, 1.5, 2.5


def expected(ex: Exercise, last: dict[str, float]) -> float:
    """How long the exercise's checks are likely to take: the build folder's last time for it
    (load), else an estimate from what its manifest runs."""
    if ex.name in last:
        return last[ex.name]
    tools = ex.sanitizer_tools
    return (_TESTS_S + _TOOL_S * len(tools)
            + (_RACECHECK_EXTRA_S if "racecheck" in tools else 0.0))


def save(build_dir: Path, exercises: list[Exercise], timeline: list[dict]) -> None:
    by_key = {ex.key: ex.name for ex in exercises}
    seconds: dict[str, float] = {}
    for row in timeline:
        name = by_key.get(row.get("exercise"))
        if name and row.get("stage") in UNTIMED and not row.get("alone"):
            seconds[name] = seconds.get(name, 0.0) + row["end_s"] - row["start_s"]
    if not seconds:
        return
    times = {**load(build_dir), **{k: round(v, 2) for k, v in seconds.items()}}
    try:
        fd, tmp = tempfile.mkstemp(dir=build_dir, prefix=f".{CHECK_TIMES}.")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(times, f, indent=0, sort_keys=True)
        os.replace(tmp, Path(build_dir) / CHECK_TIMES)
    except OSError:
        pass  # an order for next time, never worth failing a grade for
