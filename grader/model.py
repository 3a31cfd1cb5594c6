"""The one result model every output renders: report -> exercises -> stages -> cases.

Terminal table, JSON, JUnit XML and later exports (Gradescope results.json, GitHub Classroom,
PrairieLearn) are all views of a Report; none of them re-runs or re-derives anything.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, Iterator

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


class StageName(StrEnum):
    """The stages a report holds, in the order they run (grader/pipeline.py). The sources check
    refuses an exercise as its BUILD stage; the shared ceilings are a phase, not a stage."""
    BUILD = "build"
    INTEGRITY = "integrity"
    TECHNIQUE = "technique"
    TESTS = "tests"
    SANITIZER = "sanitizer"
    BENCHMARK = "benchmark"
    PROFILE = "profile"                # grade --profile: Nsight Compute's counters, no points


class FailureKind(StrEnum):
    """What the test main says a failed case ran into (support/src/gpu_test_main.cpp writes it
    on the case's "end" event): causes that the exercises graded beside it share, so the
    pipeline runs such a failure again alone before it counts."""
    OUT_OF_MEMORY = "out_of_memory"                # GPU or host memory ran out
    DEVICE_MEMORY_LEAKED = "device_memory_leaked"  # a leak check (DeviceMemoryWatch) failed:
                                                   # it reads the device's free memory, which
                                                   # the neighbours' allocations change


# Every failure kind above: the neighbours may cause each.
NEIGHBOURS_MAY_CAUSE = frozenset({FailureKind.OUT_OF_MEMORY, FailureKind.DEVICE_MEMORY_LEAKED})


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
    # The ratio's 95% interval [low, high], from the two medians' intervals (the benchmark's
    # ci_low_ms, ci_high_ms), and how many timed repeats each median took [measure, baseline];
    # None where the benchmark reported none.
    ratio_interval: list[float] | None = None
    repeats: list[int] | None = None


class _Unset:
    """A detail a stage did not set: not written to the report."""
    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False

    def __deepcopy__(self, memo):
        return self


UNSET: Any = _Unset()


@dataclass
class Details:
    """A stage's details: each stage's own typed fields, serialised under the keys reports have
    always had, only those that were set, in the order they were set (so the JSON is what it
    was). It also reads like the dict it replaces (details["passed"], .get, in), which keeps
    the views, saved reports and scripts working unchanged. A key of a loaded report that no
    field names is kept as it was, where it was; a stage cannot set one. Transient fields
    (what the pipeline reads, not the report) are never written."""

    def __setattr__(self, name: str, value) -> None:
        order = self.__dict__.setdefault("_order", [])
        if value is UNSET:
            if name in order:
                order.remove(name)
        elif name not in order and name in self._field_names():
            order.append(name)
        object.__setattr__(self, name, value)

    @classmethod
    def _field_names(cls) -> set[str]:
        return {f.name for f in fields(cls) if not f.metadata.get("transient")}

    @property
    def _extra(self) -> dict:
        return self.__dict__.setdefault("_extra_keys", {})

    @classmethod
    def from_dict(cls, data: dict | None) -> Details:
        """From a report's (or a stage's) dict: its keys in their order."""
        details = cls()
        for key, value in (data or {}).items():
            if key in cls._field_names():
                setattr(details, key, value)
            else:  # a key of an older or newer report: kept as it was
                details._put_extra(key, value)
        return details

    def to_dict(self) -> dict:
        """A plain copy: what the JSON report holds."""
        return {key: copy.deepcopy(self[key]) for key in self.__dict__.get("_order", [])}

    # Read (and write) like a dict.
    def __getitem__(self, key: str):
        if key in self.__dict__.get("_order", []):
            return self._extra[key] if key in self._extra else getattr(self, key)
        raise KeyError(key)

    def __setitem__(self, key: str, value) -> None:
        if key in self._field_names():
            setattr(self, key, value)
        elif type(self) is Details:
            self._put_extra(key, value)
        else:
            raise KeyError(f"{type(self).__name__} has no field {key!r}")

    def _put_extra(self, key: str, value) -> None:
        self._extra[key] = value
        order = self.__dict__.setdefault("_order", [])
        if key not in order:
            order.append(key)

    def __contains__(self, key: object) -> bool:
        return key in self.__dict__.get("_order", [])

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.__dict__.get("_order", [])))

    def __len__(self) -> int:
        return len(self.__dict__.get("_order", []))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Details):
            return self.to_dict() == other.to_dict()
        if isinstance(other, dict):
            return self.to_dict() == other
        return NotImplemented

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def keys(self):
        return list(self)

    def items(self):
        return [(key, self[key]) for key in self]

    def map(self, convert) -> Details:
        """A copy with convert() applied to every value (hidden.redact scrubs them)."""
        out = type(self)()
        for key in self:
            if key in self._extra:
                out._put_extra(key, convert(self[key]))
            else:
                setattr(out, key, convert(self[key]))
        for f in fields(self):
            if f.metadata.get("transient"):
                setattr(out, f.name, getattr(self, f.name))
        return out


def _transient(default_factory):
    return field(default_factory=default_factory, metadata={"transient": True})


@dataclass(eq=False)
class BuildDetails(Details):
    commands: list[str] = UNSET          # the compile commands (verbose view)
    warnings: list[str] = UNSET          # the compiler's warnings shown
    warnings_hidden: int = UNSET         # how many more there were
    refused: list[dict] = UNSET          # the sources check's findings (stages/sources.py)


@dataclass(eq=False)
class IntegrityDetails(Details):
    forbidden: list[dict] = UNSET        # {"symbol", "why"} per forbidden call found


@dataclass(eq=False)
class TechniqueDetails(Details):
    rules: list[dict] = UNSET            # each rule's verdict: name, rule, kernel, passed,
                                         # expected, found, points, max_points
    checked_kernels: dict = UNSET        # rule -> the kernels it was checked on
    launched_by: str = UNSET             # run | launchers | unknown: what said what ran


@dataclass(eq=False)
class TestsDetails(Details):
    exit: str = UNSET                    # how the program ended
    output_bytes: int = UNSET            # what it printed, where the output was cut
    forged_lines: int = UNSET            # result lines without the run's nonce
    launched_kernels: list[str] = UNSET  # kernels the run launched (launch_record.cpp)
    stopped: str = UNSET                 # the case the test main stopped at its time limit
    passed: int = UNSET
    total: int = UNSET
    among_others: str = UNSET            # the status it had among other exercises, before
                                         # the run alone that is its verdict
    among_others_why: str = UNSET        # that run's message, or its first failed case's
    again_alone: list[str] = UNSET       # the cases run again alone (the rest: among others)
    hidden: dict = UNSET                 # hidden cases: total, ran, passed (grader/hidden.py)
    # The failure kinds its cases reported (FailureKind): whether to run it again alone.
    failure_kinds: set = _transient(set)
    # Failed cases whose every failure the neighbours may cause, in a run that otherwise ended
    # well: only these run again alone.
    neighbour_cases: list = _transient(list)


@dataclass(eq=False)
class SanitizerDetails(Details):
    among_others: str = UNSET
    among_others_why: str = UNSET
    failure_kinds: set = _transient(set)


@dataclass(eq=False)
class BenchmarkDetails(Details):
    measurements: list[dict] = UNSET     # the benchmark's JSON entries, ceilings filled in
    problem: str = UNSET                 # a failed requirement or error of the harness
    disturbed: str = UNSET               # who kept the GPU busy (not measured)
    attempts: int = UNSET                # measurements taken (grader/stages/measured.py)
    shared_gpu: str = UNSET              # disturbed but kept: --allow-shared-gpu
    confirmed: bool = UNSET              # a timing-only verdict seen twice
    ceilings_measured: list[str] = UNSET  # shared ceilings this exercise was first to record
    timing: dict = UNSET                 # the program's init_s, measured_s, total_s


@dataclass(eq=False)
class ProfileDetails(Details):
    tool: str = UNSET                    # ncu --version's version line
    reference_from: str = UNSET          # the calibration file of the reference's counters,
                                         # "" where there is none for this GPU
    rows: list[dict] = UNSET             # per profiled range: measure, role (student or
                                         # baseline), kernels, launches, counters {name: value},
                                         # roofline {flops, dram_bytes, duration_s}
    comparisons: list[dict] = UNSET      # per measure and counter: measure, counter, title,
                                         # unit, student, reference, baseline, better, verdict
                                         # (worse, same, better, unknown), sentence
    problem: str = UNSET                 # what kept part of the profile from being taken
    added_s: float = UNSET               # what profiling added to the grade, in seconds


DETAILS: dict[str, type[Details]] = {
    StageName.BUILD: BuildDetails, StageName.INTEGRITY: IntegrityDetails,
    StageName.TECHNIQUE: TechniqueDetails, StageName.TESTS: TestsDetails,
    StageName.SANITIZER: SanitizerDetails, StageName.BENCHMARK: BenchmarkDetails,
    StageName.PROFILE: ProfileDetails}


@dataclass
class StageResult:
    name: StageName
    status: StageStatus
    points: float = 0.0
    max_points: float = 0.0
    duration_s: float = 0.0
    message: str = ""
    output: str = ""             # truncated compiler/test/sanitizer output
    cases: list[CaseResult] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    # The stage's typed details (DETAILS); a dict given here (a loaded report, the technique
    # and integrity stages) becomes them.
    details: Details = field(default_factory=dict)

    def __post_init__(self):
        self.status = StageStatus(self.status)
        try:
            self.name = StageName(self.name)
        except ValueError:
            pass  # a stage's own sub-run (sanitizer-memcheck), never in a report
        if not isinstance(self.details, Details):
            self.details = DETAILS.get(self.name, Details).from_dict(self.details)


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

    def stage(self, name: StageName) -> StageResult | None:
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
    # profile (with grade --profile: Nsight Compute after each benchmark, counted apart from
    # the benchmarks), ceilings (the shared ceilings' programs, each once, after the benchmarks).
    phases: dict = field(default_factory=dict)
    # When each stage of each exercise ran, in seconds from the grade's start: {"exercise",
    # "stage", "start_s", "end_s", "alone"} (a run again alone), in start order; where the
    # checks' time goes with several exercises at once.
    timeline: list = field(default_factory=list)
    # How the grade shared its GPU (grader/gpu_turns.py, grader/gpu_load.py): the seconds it
    # waited for its turns, the measurements taken again or not taken because another process
    # used the GPU, and whether --allow-shared-gpu kept disturbed measurements.
    sharing: dict = field(default_factory=dict)
    # The sandbox the student programs ran in (grader/sandbox.py): its status (on, off,
    # unavailable), why not where it is not on, and what this machine's sandbox leaves open.
    sandbox: dict = field(default_factory=dict)
    # The calibration of this GPU model the thresholds came from (grader/calibration.py): its
    # status (found, none), file, the GPU's slug, the thresholds it changed and those it
    # flags. Empty where nothing was looked up (--build-only, no GPU).
    calibration: dict = field(default_factory=dict)
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
        for exercise, ex_data in zip(self.exercises, data["exercises"]):
            for stage, stage_data in zip(exercise.stages, ex_data["stages"]):
                stage_data["details"] = stage.details.to_dict()
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
