"""Reading and checking tests/fixtures/submissions/<name>/expect.toml.

    description = "what this fixture is"
    [exercises.<exercise_name>]
    status = ["partial"]        # allowed final statuses
    correctness = "full"        # optional: full | none | some
    performance = "not_full"    # optional: full | none | not_full
    messages = ["substring"]    # optional, case-insensitive, in the exercise's JSON
    technique = { rule_name = "passed" }  # optional: verdicts of the technique stage's rules
    technique_messages = ["substring"]    # optional, case-insensitive, in the technique stage

The technique keys hold on a GPU (full grading) and on the CPU alike: the technique stage reads
the compiled code and runs with --build-only (tests/test_technique_fixtures.py checks them
there). So does a whole expectation whose status is "rejected": the integrity stage rejects
the code from the compiled library alone, before anything runs, and CI checks it in full.
Other statuses, correctness, performance and messages are checked on a GPU only.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

from helpers import FIXTURES

STATUSES = ("passed", "partial", "failed", "compile_error", "crashed", "timed_out",
            "exited_early", "not_submitted", "skipped", "unchecked", "rejected")
CORRECTNESS = ("full", "none", "some")
PERFORMANCE = ("full", "none", "not_full")
VERDICTS = ("passed", "failed")
EXERCISE_KEYS = {"status", "correctness", "performance", "messages", "technique",
                 "technique_messages"}


def rejected_only(spec: dict) -> bool:
    """The expectation is a rejection, which the CPU can check in full."""
    return isinstance(spec, dict) and spec.get("status") == ["rejected"]


def static_dirs() -> list[Path]:
    """Fixtures with something to check without a GPU: technique verdicts, or rejections."""
    dirs = sorted(p.parent for p in FIXTURES.glob("*/expect.toml")) if FIXTURES.is_dir() else []
    return [d for d in dirs if any(
        isinstance(spec, dict) and ("technique" in spec or rejected_only(spec))
        for spec in load(d).get("exercises", {}).values())]


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
        for key in ("messages", "technique_messages"):
            messages = spec.get(key, [])
            if not isinstance(messages, list) or \
                    not all(isinstance(m, str) and m for m in messages):
                out.append(f"{at}.{key}: a list of non-empty strings")
        technique = spec.get("technique", {})
        if not isinstance(technique, dict) or \
                not all(v in VERDICTS for v in technique.values()):
            out.append(f"{at}.technique: a table of rule name = passed | failed")
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
    return out + technique_mismatches(spec, exercise)


def technique_mismatches(spec: dict, exercise: dict) -> list[str]:
    """How the exercise's technique stage differs from the expected verdicts and messages."""
    name = exercise["name"]
    if "technique" not in spec and "technique_messages" not in spec:
        return []
    stage = next((s for s in exercise.get("stages", []) if s["name"] == "technique"), None)
    if stage is None:
        return [f"{name}: no technique stage in the report ({exercise.get('message', '')})"]
    out = []
    verdicts = {c["name"]: c["status"] for c in stage.get("cases", [])}
    for rule, want in spec.get("technique", {}).items():
        if verdicts.get(rule) != want:
            out.append(f"{name}: technique rule {rule} {verdicts.get(rule, 'missing')!r}, "
                       f"expected {want!r} ({stage.get('message', '')})")
    flat = "\n".join(_strings(stage)).lower()
    for message in spec.get("technique_messages", []):
        if message.lower() not in flat:
            out.append(f"{name}: message {message!r} not found in the technique stage "
                       f"({stage.get('message', '')})")
    return out
