"""Shared ceilings: the measurements that several exercises' benchmarks compare with alike (a
copy of a given size, CUB or cuBLAS on a ladder's input), each named by a key that says what
is measured on which shape ("copy:402653184", "reduce_ladder/cub_reduce_sum:268435456").

The grader runs every benchmark with --ceilings-elsewhere: the benchmark records such a
measurement's key and times nothing. After the run's benchmarks, each course-only ceilings
program (support's `course_ceilings` for the copies, a shared folder's
`<chapter>_<shared>_ceilings`) runs once, alone on the GPU like the benchmarks, with every key
the benchmarks recorded for it, and every exercise that recorded a key is scored against that
one measurement. So a ceiling is never measured twice in one run, and never in a process with
student code, which could slow it (a kernel left running by a static constructor) to flatter
its own ratio.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from grader.manifest import COURSE_CEILINGS_PROGRAM, Exercise, ceilings_program, ceilings_source
from grader.stages.common import GradeOptions, clip, run_reporting
from grader.stages.measured import Alone

TIMEOUT_S = 180.0
COPY_PREFIX = "copy:"
# What a ceilings program's measurement hands to the benchmark's record of the same key.
_TAKEN = ("median_ms", "min_ms", "max_ms", "repeats", "ci_low_ms", "ci_high_ms", "stopped",
          "rate", "host_ms")


class Ceilings:
    """The shared ceilings of one grading run: prepare() measures those the run's benchmarks
    recorded, each program once; complete() hands them to each exercise's measurements."""

    def __init__(self, options: GradeOptions,
                 progress: Callable[[str], None] | None = None, alone: Alone | None = None):
        self.options = options
        self.progress = progress or (lambda _message: None)
        self.alone = alone or Alone(None, None)
        self._busy: dict[tuple[str, str], str] = {}       # (program, key) -> who kept it busy
        self._measured: dict[tuple[str, str], dict] = {}  # (program, key) -> its measurement
        self._failed: dict[tuple[str, str], str] = {}     # (program, key) -> why not
        self._first: dict[tuple[str, str], str] = {}      # (program, key) -> first exercise
        self._runs = 0

    def program_for(self, ex: Exercise, key: str) -> str:
        """The program that measures `key` for `ex`, or "" when no course program may: copies
        come from the support library's, a ladder's keys from the exercise's own shared
        folder's (a key naming another folder is not the course's)."""
        if key.startswith(COPY_PREFIX):
            return COURSE_CEILINGS_PROGRAM
        if ex.shared and key.startswith(f"{ex.shared}/") and ceilings_source(ex) is not None:
            return ceilings_program(ex)
        return ""

    def prepare(self, recorded: list[tuple[Exercise, list]]) -> None:
        """Measures every key that the benchmarks in `recorded` (exercise, its measurements)
        recorded elsewhere and that this run has not measured yet: one run of each ceilings
        program, with all of its keys."""
        wanted: dict[str, list[str]] = {}
        for ex, entries in recorded:
            for entry in _elsewhere(entries):
                key = str(entry.get("key", ""))
                program = self.program_for(ex, key)
                if program and (program, key) not in self._first:
                    self._first[(program, key)] = ex.key
                    wanted.setdefault(program, []).append(key)
        for program, keys in wanted.items():
            self._measure(program, keys)

    def complete(self, ex: Exercise, entries: list) -> tuple[str, list[str]]:
        """Fills each entry the benchmark recorded elsewhere (`"elsewhere": true`) with the
        run's measurement of its key, measuring what prepare() did not. Returns why some could
        not be measured ("" when all were: the course's failure, not the student's), and the
        keys this exercise was the first of the run to record."""
        self.prepare([(ex, entries)])
        problems = []
        first = []
        for entry in _elsewhere(entries):
            key = str(entry.get("key", ""))
            program = self.program_for(ex, key)
            entry["measured_by"] = program
            if not program:
                entry["valid"] = False
                entry["problem"] = f"no course ceilings program measures {key!r}"
                problems.append(entry["problem"])
                continue
            if self._first.get((program, key)) == ex.key and key not in first:
                first.append(key)
            measured = self._measured.get((program, key))
            why = _disagreement(entry, measured) if measured is not None \
                else self._failed.get((program, key), f"{key} was not measured")
            if why:
                entry["valid"] = False
                entry["problem"] = why
                problems.append(f"{entry.get('name')}: {why}")
                continue
            for field in _TAKEN:
                entry[field] = measured.get(field)
            if not measured.get("valid", False):
                entry["valid"] = False
                entry["problem"] = f"{program}: {measured.get('problem') or 'invalid'}"
                problems.append(f"{entry.get('name')}: {entry['problem']}")
        return "; ".join(problems), first

    def _measure(self, program: str, keys: list[str]) -> None:
        """Runs `program --only keys`, alone on the GPU, and keeps what it measured."""
        self._runs += 1
        folder = self.options.work_dir / "ceilings"
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / f"{self._runs}-{program}.json"
        nonce_file = folder / f"{self._runs}-{program}.nonce"
        binary = self.options.build_dir / program
        if not binary.is_file():
            self._fail(program, keys, f"the course's ceilings program {program} was not built")
            return
        started = time.monotonic()
        measured = self.alone.measure(
            f"the shared ceilings of {program}",
            lambda: run_reporting(self.options, [str(binary), "--only", ",".join(keys),
                                                 "--json", str(out)], out, nonce_file, TIMEOUT_S))
        if measured.not_measured:
            why = measured.disturbance.describe()
            self._fail(program, keys, f"not measured: {why}")
            self._busy.update({(program, key): why for key in keys})
            return
        result, data, nonce = measured.result
        self.progress(f"measured {len(keys)} shared ceiling{'s' if len(keys) != 1 else ''} "
                      f"with {program} ({time.monotonic() - started:.1f} s)")
        if not isinstance(data, dict) or data.get("completed") is not True \
                or data.get("nonce") != nonce:
            tail = clip(result.output.strip(), 600)
            self._fail(program, keys, f"the course's ceilings program {program} "
                                      f"{result.describe_exit()} without its report"
                       + (f": {tail}" if tail else ""))
            return
        by_key = {m.get("key"): m for m in data.get("measurements", [])
                  if isinstance(m, dict) and m.get("key")}
        errors = "; ".join(map(str, data.get("errors", [])))
        for key in keys:
            if key in by_key:
                self._measured[(program, key)] = by_key[key]
            else:
                self._failed[(program, key)] = (f"the course's ceilings program {program} "
                                                f"did not measure {key}"
                                                + (f": {errors}" if errors else ""))

    def disturbed(self, ex: Exercise, entries: list) -> str:
        """Who kept the GPU busy while a ceiling this exercise needs was to be measured, or ""
        when none of its ceilings went unmeasured for that reason."""
        for entry in _elsewhere(entries):
            why = self._busy.get((self.program_for(ex, str(entry.get("key", ""))),
                                  str(entry.get("key", ""))))
            if why:
                return why
        return ""

    def _fail(self, program: str, keys: list[str], why: str) -> None:
        for key in keys:
            self._failed[(program, key)] = why


def _elsewhere(entries) -> list[dict]:
    """The measurements a benchmark recorded for a ceilings program to measure."""
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, dict) and e.get("elsewhere") is True]


def _disagreement(entry: dict, measured: dict) -> str:
    """Why the benchmark's record and the ceilings program's measurement of one key are not
    the same work, or ""."""
    if entry.get("unit") != measured.get("unit"):
        return (f"the benchmark counts {entry.get('unit')!r}, the ceilings program "
                f"{measured.get('unit')!r}")
    work, theirs = entry.get("work_per_run"), measured.get("work_per_run")
    if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
               for w in (work, theirs)) or not math.isclose(work, theirs, rel_tol=1e-9):
        return (f"the benchmark counts {work!r} units of work per run, the ceilings program "
                f"{theirs!r}")
    return ""

