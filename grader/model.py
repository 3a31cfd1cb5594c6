"""The one result model every output renders: report -> exercises -> stages -> cases.

Terminal table, JSON, JUnit XML and later exports (Gradescope results.json, GitHub Classroom,
PrairieLearn) are all views of a Report; none of them re-runs or re-derives anything.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

SCHEMA_VERSION = 1

# Exercise status, from best to worst is not an order: each names what happened.
PASSED = "passed"              # every stage ran and earned its points
PARTIAL = "partial"            # graded, but some points were lost
FAILED = "failed"              # a correctness stage failed
NOT_SUBMITTED = "not_submitted"
COMPILE_ERROR = "compile_error"
CRASHED = "crashed"
TIMED_OUT = "timed_out"
EXITED_EARLY = "exited_early"
SKIPPED = "skipped"            # not gradable here (no GPU, compute capability too low)


@dataclass
class CaseResult:
    name: str
    status: str  # passed | failed | skipped | not_run | crashed | timed_out
    message: str = ""
    duration_ms: float = 0.0


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
    status: str                  # passed | failed | skipped | error | timed_out | crashed
    points: float = 0.0
    max_points: float = 0.0
    duration_s: float = 0.0
    message: str = ""
    output: str = ""             # truncated compiler/test/sanitizer output
    cases: list[CaseResult] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    details: dict = field(default_factory=dict)


@dataclass
class ExerciseResult:
    key: str
    name: str
    chapter: str
    title: str
    status: str
    score: float
    max_score: float
    message: str = ""
    stages: list[StageResult] = field(default_factory=list)

    def stage(self, name: str) -> StageResult | None:
        return next((s for s in self.stages if s.name == name), None)


@dataclass
class GpuInfo:
    name: str = ""
    compute_capability: str = ""
    driver: str = ""
    memory_mib: int = 0


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
    exercises: list[ExerciseResult] = field(default_factory=list)
    schema: int = SCHEMA_VERSION

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
        return data
