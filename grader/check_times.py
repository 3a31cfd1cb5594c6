"""How long each exercise's checks took in a build folder's last grade, so that the next grade
there starts the longest first (grader/pipeline.py): with several exercises at once, a long
one started last keeps every other worker waiting for it at the end.

The file (CHECK_TIMES in the build folder) maps an exercise's name to the seconds its untimed
stages ran among the others (the timeline's rows that are not the benchmark's, not runs again
alone); a grade of some exercises updates theirs and keeps the rest. It only orders work: a
missing or unreadable file orders nothing, and nothing in it reaches a score.
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
