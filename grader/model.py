"""The one result model every output renders: report -> exercises -> stages -> cases.

Terminal table, JSON, JUnit XML and later exports (Gradescope results.json, GitHub Classroom,
PrairieLearn) are all views of a Report; none of them re-runs or re-derives anything.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from pathlib import Path

from grader.errors import GraderError

SCHEMA_VERSION = 1


# StrEnum: each member is its string, so the JSON report holds plain "passed", "compile_error".
class ExerciseStatus(StrEnum):
    """What happened to an exercise; not an order from best to worst."""
    PASSED = "passed"                  # every stage ran and earned its points
    PARTIAL = "partial"                # graded, but some points were lost
    FAILED = "failed"                  # a correctness stage failed
    NOT_SUBMITTED = "not_submitted"
    COMPILE_ERROR = "compile_error"
    CRASHED = "crashed"
    TIMED_OUT = "timed_out"
    EXITED_EARLY = "exited_early"
    SKIPPED = "skipped"                # not gradable here (no GPU, compute capability too low)
    UNCHECKED = "unchecked"            # the tests passed but the sanitizer could not run:
                                       # correctness points withheld, nothing benchmarked
    REJECTED = "rejected"              # the compiled code calls what it must not (course
                                       # baselines, files, processes): nothing run, no points
    INCOMPLETE = "incomplete"          # correct, but a measurement could not be taken (another
                                       # process kept the GPU busy): its points withheld until
                                       # it is graded again


class StageStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    ERROR = "error"                    # the tool could not check anything (not the student's fault)
    TIMED_OUT = "timed_out"
    CRASHED = "crashed"
    EXITED_EARLY = "exited_early"
    NOT_MEASURED = "not_measured"      # the GPU stayed busy with another process (a benchmark)
    NOT_COUNTED = "not_counted"        # ran and found nothing wrong, but vouches for nothing
                                       # while the exercise is not correct: a clean sanitizer
                                       # run over failing cases, technique rules met by code
                                       # that fails its tests (grader/scoring.py)


class CaseStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    NOT_RUN = "not_run"
    CRASHED = "crashed"
    TIMED_OUT = "timed_out"


def now() -> str:
    """The time now, as every record of the grader writes it: UTC, ISO 8601, in seconds."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class CaseResult:
    name: str
    status: CaseStatus
    message: str = ""
    duration_ms: float = 0.0

    def __post_init__(self):
        self.status = CaseStatus(self.status)  # also from a loaded report's plain string


@dataclass
class Metric:
    """One performance criterion: measured ratio against an in-run baseline, and its points."""
    name: str
    description: str
    measure: str
    baseline: str
    value: float | None          # measure's rate
    baseline_value: float | None
    unit: str
    ratio: float | None
    full_at: float
    zero_at: float
    points: float
    max_points: float
    message: str = ""


@dataclass
class StageResult:
    name: str                    # build | tests | sanitizer | benchmark
    status: StageStatus
    points: float = 0.0
    max_points: float = 0.0
    duration_s: float = 0.0
    message: str = ""
    output: str = ""             # truncated compiler/test/sanitizer output
    cases: list[CaseResult] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    details: dict = field(default_factory=dict)

    def __post_init__(self):
        self.status = StageStatus(self.status)


@dataclass
class ExerciseResult:
    key: str
    name: str
    chapter: str
    title: str
    status: ExerciseStatus
    score: float
    max_score: float
    message: str = ""
    stages: list[StageResult] = field(default_factory=list)

    def __post_init__(self):
        self.status = ExerciseStatus(self.status)

    def stage(self, name: str) -> StageResult | None:
        return next((s for s in self.stages if s.name == name), None)


@dataclass
class GpuInfo:
    name: str = ""
    compute_capability: str = ""
    driver: str = ""
    memory_mib: int = 0
    uuid: str = ""       # nvidia-smi's GPU-... id: names the GPU's lock (grader/gpu_turns.py)
    index: int = -1      # nvidia-smi's index on its host


@dataclass
class Report:
    submission: str
    seed: int
    started_at: str
    finished_at: str = ""
    grader_version: str = ""
    gpu: GpuInfo | None = None
    host: str = ""
    options: dict = field(default_factory=dict)
    # Wall seconds of the grade's phases: configure, build (the one parallel build), checks
    # (the untimed stages of every exercise, in parallel), benchmarks (one after another),
    # ceilings (the shared ceilings' programs, each once, after the benchmarks).
    phases: dict = field(default_factory=dict)
    # How the grade shared its GPU (grader/gpu_turns.py, grader/gpu_load.py): the seconds it
    # waited for its turns, the measurements taken again or not taken because another process
    # used the GPU, and whether --allow-shared-gpu kept disturbed measurements.
    sharing: dict = field(default_factory=dict)
    # The sandbox the student programs ran in (grader/sandbox.py): its status (on, off,
    # unavailable), why not where it is not on, and what this machine's sandbox leaves open.
    sandbox: dict = field(default_factory=dict)
    exercises: list[ExerciseResult] = field(default_factory=list)
    schema: int = SCHEMA_VERSION

    @property
    def incomplete(self) -> list[ExerciseResult]:
        """The exercises whose grade is not final: a measurement could not be taken."""
        return [e for e in self.exercises if e.status == ExerciseStatus.INCOMPLETE]

    @property
    def score(self) -> float:
        return sum(e.score for e in self.exercises)

    @property
    def max_score(self) -> float:
        return sum(e.max_score for e in self.exercises)

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0

    def to_dict(self) -> dict:
        data = asdict(self)
        data["score"] = round(self.score, 3)
        data["max_score"] = round(self.max_score, 3)
        data["percent"] = round(self.percent, 2)
        data["complete"] = not self.incomplete
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Report:
        """The inverse of to_dict (score, max_score and percent are derived, so ignored)."""
        try:
            exercises = []
            for e in data["exercises"]:
                stages = []
                for s in e.get("stages", []):
                    s = dict(s)
                    s["cases"] = [CaseResult(**c) for c in s.get("cases", [])]
                    s["metrics"] = [Metric(**m) for m in s.get("metrics", [])]
                    stages.append(StageResult(**s))
                exercises.append(ExerciseResult(**{**e, "stages": stages}))
            gpu = GpuInfo(**data["gpu"]) if data.get("gpu") else None
            keep = {f.name for f in fields(cls)} - {"gpu", "exercises"}
            return cls(gpu=gpu, exercises=exercises, **{k: data[k] for k in keep if k in data})
        except KeyError as error:
            raise GraderError(f"not a grader report (no {error})") from None
        except (TypeError, AttributeError, ValueError) as error:
            raise GraderError(f"not a grader report ({error})") from None

    @classmethod
    def load(cls, path: Path) -> Report:
        """A report written by render.write_json; GraderError (one line) when it is not one."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise GraderError(f"report {path} does not exist") from None
        except OSError as error:
            raise GraderError(f"report {path} cannot be read ({error.strerror or error})") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise GraderError(f"report {path} is not JSON ({error})") from None
        try:
            return cls.from_dict(data)
        except GraderError as error:
            raise GraderError(f"report {path}: {error}") from None
