"""Reading and checking tests/fixtures/submissions/<name>/expect.toml.

    description = "what this fixture is"
    [exercises.<exercise_name>]
    status = ["partial"]        # allowed final statuses
    correctness = "full"        # optional: full | none | some
    performance = "not_full"    # optional: full | none | not_full
    messages = ["substring"]    # optional, case-insensitive, in the exercise's JSON
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

from helpers import FIXTURES

STATUSES = ("passed", "partial", "failed", "compile_error", "crashed", "timed_out",
            "exited_early", "not_submitted", "skipped")
CORRECTNESS = ("full", "none", "some")
PERFORMANCE = ("full", "none", "not_full")
EXERCISE_KEYS = {"status", "correctness", "performance", "messages"}


def fixture_dirs() -> list[Path]:
    """Fixture folders with an expect.toml; COURSE_FIXTURES (names, space- or comma-separated,
    graded in the order given; 'all', the default, or 'none') narrows them. A name that is
    not a fixture is an error, so a typo cannot quietly check nothing."""
    dirs = sorted(p.parent for p in FIXTURES.glob("*/expect.toml")) if FIXTURES.is_dir() else []
    wanted = os.environ.get("COURSE_FIXTURES", "all").replace(",", " ").split()
    if wanted in ([], ["all"]):
        return dirs
    if wanted == ["none"]:
        return []
    by_name = {d.name: d for d in dirs}
    unknown = [name for name in wanted if name not in by_name]
    if unknown:
        raise ValueError(f"COURSE_FIXTURES names no fixture {', '.join(unknown)} "
                         f"(fixtures: {', '.join(by_name)})")
    return [by_name[name] for name in dict.fromkeys(wanted)]


def load(directory: Path) -> dict:
    with open(directory / "expect.toml", "rb") as f:
        return tomllib.load(f)


def problems(directory: Path, known_exercises: set[str]) -> list[str]:
    """Everything wrong with a fixture's expect.toml (empty when it is well-formed)."""
    where = f"{directory.name}/expect.toml"
    try:
        data = load(directory)
    except tomllib.TOMLDecodeError as error:
        return [f"{where}: not valid TOML ({error})"]
    out = []
    if not isinstance(data.get("description"), str) or not data["description"].strip():
        out.append(f"{where}: description: a non-empty string is required")
    extra = set(data) - {"description", "exercises"}
    if extra:
        out.append(f"{where}: unknown keys {sorted(extra)}")
    exercises = data.get("exercises")
    if not isinstance(exercises, dict) or not exercises:
        return out + [f"{where}: [exercises.<name>]: at least one table is required"]
    for name, spec in exercises.items():
        at = f"{where}: exercises.{name}"
        if name not in known_exercises:
            out.append(f"{at}: no such exercise")
        if not isinstance(spec, dict):
            out.append(f"{at}: must be a table")
            continue
        if set(spec) - EXERCISE_KEYS:
            out.append(f"{at}: unknown keys {sorted(set(spec) - EXERCISE_KEYS)}")
        status = spec.get("status")
        if not isinstance(status, list) or not status or \
                not all(isinstance(s, str) and s in STATUSES for s in status):
            out.append(f"{at}.status: a non-empty list of {', '.join(STATUSES)}")
        if "correctness" in spec and spec["correctness"] not in CORRECTNESS:
            out.append(f"{at}.correctness: one of {', '.join(CORRECTNESS)}")
        if "performance" in spec and spec["performance"] not in PERFORMANCE:
            out.append(f"{at}.performance: one of {', '.join(PERFORMANCE)}")
        messages = spec.get("messages", [])
        if not isinstance(messages, list) or \
                not all(isinstance(m, str) and m for m in messages):
            out.append(f"{at}.messages: a list of non-empty strings")
    return out


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def mismatches(spec: dict, exercise: dict) -> list[str]:
    """How a graded exercise (the report's JSON object) differs from its expectation."""
    out = []
    name = exercise["name"]
    if exercise["status"] not in spec["status"]:
        out.append(f"{name}: status {exercise['status']!r}, expected one of {spec['status']} "
                   f"({exercise.get('message', '')})")
    stages = {s["name"]: s for s in exercise.get("stages", [])}

    def points(stage_name):
        stage = stages.get(stage_name)
        return (stage["points"], stage["max_points"]) if stage else (0.0, None)

    want = spec.get("correctness")
    if want:
        got, top = points("tests")
        ok = {"full": top is not None and top > 0 and abs(got - top) < 1e-6,
              "none": got == 0,
              "some": top is not None and 0 < got < top}[want]
        if not ok:
            out.append(f"{name}: correctness {want!r} expected, tests stage has "
                       f"{got}/{top if top is not None else '-'} points")
    want = spec.get("performance")
    if want:
        got, top = points("benchmark")
        ok = {"full": top is not None and top > 0 and abs(got - top) < 1e-6,
              "none": got == 0,
              "not_full": top is None or got < top - 1e-6}[want]
        if not ok:
            out.append(f"{name}: performance {want!r} expected, benchmark stage has "
                       f"{got}/{top if top is not None else '-'} points")
    text = json.dumps(exercise, ensure_ascii=False).lower()
    flat = "\n".join(_strings(exercise)).lower()
    for message in spec.get("messages", []):
        if message.lower() not in text and message.lower() not in flat:
            out.append(f"{name}: message {message!r} not found in the exercise's report")
    return out
