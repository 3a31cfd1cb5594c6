"""The grading pipeline: configure and build everything once (a shared phase), then each
exercise through EXERCISE_STAGES, a declared list of Stage objects run in order: build (the
sources check first), integrity and technique (which read the compiled code, so they run with
--build-only and without a GPU; code that calls what it must not is rejected before it runs),
tests, technique again on the kernels the tests launched, sanitizer, and the benchmark
(grader/stages/); then the shared ceilings the benchmarks recorded (the other shared phase),
and last grader.scoring.score, once per exercise, on the stages' results.

Every stage runs its program through grader.proc.run, in its own process group with a time
limit and bounded output, so one exercise's compile error, crash, hang, early exit or flood of
output costs that exercise only.

The stages up to the sanitizer are not timed, so several exercises run them at once
(options.parallel, by default from the GPU's memory and the host's cores); a tests or
sanitizer stage that ended among neighbours in a way they could have caused (out of time, a
crash, a failure kind the test main reports: out of memory, a leak check) is run again alone,
and that run is the verdict, so the load of other exercises never costs a student points.
An exercise whose tests hold the GPU alone (`alone = true`) runs its programs after the others'.
The benchmarks come last, one at a time, with nothing else running; then the shared ceilings
they recorded (grader/stages/ceilings.py), each course-only ceilings program once, alone too;
then the ratios and the scores.
"""

from __future__ import annotations

import platform
import shutil
import time
import threading
from abc import ABC, abstractmethod
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from typing import Callable

from grader import (__version__, check_times, folder_lock, gpu_load, gpu_turns, hidden, model,
                    proc, sandbox, scoring)
from grader.gpu_load import LoadWatch
from grader.gpu_turns import GpuTurns
from grader.manifest import Exercise
from grader.model import FailureKind, StageName, StageStatus
from grader.stages import (benchmark, build, integrity, profile, sanitizer, sources, technique,
                           tests)
from grader.stages.ceilings import Ceilings
from grader.stages.common import GradeOptions, host_cores
from grader.stages.measured import Alone


# Exercises checked at once by default: at most this many, one per two host cores (a test
# program and its sanitizer runs) and per this much GPU memory (a test program's context and
# buffers, under a sanitizer too).
MAX_PARALLEL = 8
GPU_MIB_PER_EXERCISE = 10 * 1024


def default_parallel(gpu: model.GpuInfo | None, build_only: bool = False,
                     cores: int | None = None) -> int:
    """One exercise per two host cores and per GPU_MIB_PER_EXERCISE of GPU memory, at most
    MAX_PARALLEL. Without a GPU to share (--build-only) one per core: the checks then only
    read compiled code, one process at a time, and with two workers or more they start while
    the rest still builds."""
    if cores is None:
        cores = host_cores()
    if build_only:
        return max(1, min(MAX_PARALLEL, cores))
    by_memory = gpu.memory_mib // GPU_MIB_PER_EXERCISE if gpu and gpu.memory_mib else 1
    return max(1, min(MAX_PARALLEL, cores // 2, by_memory))


# Test processes of one exercise at most: each starts its own CUDA context, which beyond a few
# costs more than the cases it takes over.
MAX_TEST_SHARDS = 4


# Failure kinds that the test main reports (model.FailureKind) and that the neighbours may
# cause: memory they hold, and the leak checks, which read the device's free memory.
NEIGHBOURS_MAY_CAUSE = model.NEIGHBOURS_MAY_CAUSE


class Phase(Enum):
    """When a stage runs. CHECK: the compiled code's checks, also with --build-only. PROGRAM:
    on the GPU, unless the exercise cannot run here, in a shared turn beside other exercises.
    Both are untimed, several exercises at once. TIMED: after every exercise's checks, one at
    a time, alone on the GPU."""
    CHECK = "check"
    PROGRAM = "program"
    TIMED = "timed"


@dataclass
class Context:
    """One exercise on its way through the stages: what they read and what they found."""
    grader: Grader
    ex: Exercise
    stages: list[model.StageResult] = field(default_factory=list)
    alone: bool = False                      # a re-run alone: every program runs alone
    linked: model.StageResult | None = None  # the build stage, when the one build linked it
    only_cases: list[str] = field(default_factory=list)  # the tests stage runs these only

    @property
    def options(self) -> GradeOptions:
        return self.grader.options

    def result(self, name: StageName) -> model.StageResult | None:
        return next((s for s in self.stages if s.name == name), None)

    def record(self, result: model.StageResult) -> None:
        """A stage's result, appended, or in place of the stage's earlier result (the technique
        rules again, on what the tests launched)."""
        for i, stage in enumerate(self.stages):
            if stage.name == result.name:
                self.stages[i] = result
                return
        self.stages.append(result)


class Stage(ABC):
    """A step of an exercise's pipeline: run() when it applies(); the exercise goes no further
    after a result that ends() it. `student_code`: it runs the student's code, so a re-run
    alone runs it again. `beside_tests`: a check stage that may run on a thread of its own
    while the tests run, when there are cores to spare (it never ends the exercise)."""
    name: StageName
    phase: Phase = Phase.CHECK
    student_code: bool = False
    beside_tests: bool = False

    def applies(self, context: Context) -> bool:
        return True

    @abstractmethod
    def run(self, context: Context) -> model.StageResult: ...

    def ends(self, result: model.StageResult) -> bool:
        return False


class BuildStage(Stage):
    """The sources check, then the exercise's programs: linked by the build of every
    exercise (build.build_all), or built again alone so that the stage names the compiler's
    errors."""
    name = StageName.BUILD

    def run(self, context: Context) -> model.StageResult:
        ex = context.ex
        refused = context.grader.refused.get(ex.name) or (
            None if context.linked else sources.check(context.options, ex))
        return refused or context.linked or build.run(context.options, ex,
                                                      context.grader.build_log)

    def ends(self, result: model.StageResult) -> bool:
        return result.status != StageStatus.PASSED


class IntegrityStage(Stage):
    name = StageName.INTEGRITY

    def run(self, context: Context) -> model.StageResult:
        return integrity.run(context.options, context.ex)

    def ends(self, result: model.StageResult) -> bool:
        return result.status != StageStatus.PASSED  # rejected or unchecked: never run


class TechniqueStage(Stage):
    """The technique rules on the compiled code, counting the kernels its launchers reach.
    With cores to spare it runs beside the tests (beside_tests): it reads the compiled code
    only, and its verdict decides nothing the tests do."""
    name = StageName.TECHNIQUE
    beside_tests = True

    def applies(self, context: Context) -> bool:
        return bool(context.ex.technique)

    def run(self, context: Context) -> model.StageResult:
        return technique.run(context.options, context.ex)


class TestsStage(Stage):
    name = StageName.TESTS
    phase = Phase.PROGRAM
    student_code = True

    def run(self, context: Context) -> model.StageResult:
        ex = context.ex
        with gpu_turns.maybe(context.grader.turns, f"the tests of {ex.key}",
                             context.alone or ex.tests_alone):
            # A run alone is alone in every way: its cases in one process, so that checks
            # that read the device's free memory see no sibling's allocations.
            return tests.run(context.options, ex, context.options.build_dir / f"{ex.name}_test",
                             shards=1 if context.alone else context.options.test_shards,
                             gtest_filter=":".join(context.only_cases) or None)

    def ends(self, result: model.StageResult) -> bool:
        return result.status == StageStatus.SKIPPED  # no GPU: nothing else can run


class TechniqueOnWhatRan(TechniqueStage):
    """The technique rules again, now counting only the kernels the test run launched
    (support/src/launch_record.cpp) and those they launch from the device: a rule met by a
    kernel that never ran is not met. Only a run that reported every case counts (a run cut
    short launched less than the code does, and the compiled code's verdict stands)."""
    phase = Phase.PROGRAM
    beside_tests = False

    def applies(self, context: Context) -> bool:
        tested = context.result(StageName.TESTS)
        checked = context.result(StageName.TECHNIQUE)
        return (checked is not None and checked.status != StageStatus.ERROR
                and bool(tested.details.get("launched_kernels"))
                and tested.status in (StageStatus.PASSED, StageStatus.FAILED)
                and not any(c.status == model.CaseStatus.NOT_RUN for c in tested.cases))

    def run(self, context: Context) -> model.StageResult:
        launched = context.result(StageName.TESTS).details.launched_kernels
        return technique.run(context.options, context.ex, set(launched))


class SanitizerStage(Stage):
    name = StageName.SANITIZER
    phase = Phase.PROGRAM
    student_code = True

    def applies(self, context: Context) -> bool:
        tested = context.result(StageName.TESTS)
        # After a time-out, or a case that never ends, there is nothing it could check.
        return (context.options.sanitizer and tested.status != StageStatus.TIMED_OUT
                and "stopped" not in tested.details)

    def run(self, context: Context,
            cancel: threading.Event | None = None) -> model.StageResult:
        ex = context.ex
        with gpu_turns.maybe(context.grader.turns, f"the sanitizer runs of {ex.key}",
                             context.alone or ex.tests_alone):
            return sanitizer.run(context.options, ex,
                                 context.options.build_dir / f"{ex.name}_test", cancel)

    def starts_early(self, context: Context) -> bool:
        """Whether to start beside the tests rather than after them: only with cores to spare
        (a re-grade of a few exercises), never in a run alone, and only when it could apply
        whatever the tests do (it is dropped, and its runs ended, when they time out)."""
        ex = context.ex
        return (context.options.sanitizer and context.options.sanitizer_tools_at_once > 1
                and not context.alone and not ex.tests_alone)


class BenchmarkStage(Stage):
    """The measurement, alone on the GPU; its ratios wait for the shared ceilings
    (benchmark.ratios, before scoring)."""
    name = StageName.BENCHMARK
    phase = Phase.TIMED
    student_code = True

    def applies(self, context: Context) -> bool:
        return bool(context.ex.performance)

    def run(self, context: Context) -> model.StageResult:
        grader, ex = context.grader, context.ex
        if not grader.options.benchmark:
            return benchmark.not_run("not run (--no-benchmark)")
        if not scoring.correct(context.stages):
            return benchmark.not_run(
                "not run: the exercise must pass its tests and the sanitizer first")
        binary = grader.options.build_dir / f"{ex.name}_bench"
        measured = grader.alone.measure(f"the benchmark of {ex.key}",
                                        lambda: benchmark.run(grader.options, ex, binary),
                                        suspect=benchmark.timing_suspect)
        return benchmark.from_measured(ex, measured)


class ProfileStage(Stage):
    """grade --profile: the benchmark's measurements again under Nsight Compute, alone on the
    GPU, their counters beside the reference's and the baseline's. Never points: scoring
    passes it by, so an exercise's status and score are the same without it."""
    name = StageName.PROFILE
    phase = Phase.TIMED
    student_code = True

    def applies(self, context: Context) -> bool:
        bench = context.result(StageName.BENCHMARK)
        return (context.options.profile and bool(context.ex.profile_counters)
                and bench is not None and bench.status == StageStatus.PASSED)

    def run(self, context: Context) -> model.StageResult:
        grader, ex = context.grader, context.ex
        binary = grader.options.build_dir / f"{ex.name}_bench"
        with gpu_turns.maybe(grader.turns, f"the profile of {ex.key}", alone=True):
            result = profile.run(grader.options, ex, binary,
                                 grader.gpu.name if grader.gpu is not None else "")
        grader.progress(f"profiled {ex.key} ({result.duration_s:.1f} s)")
        return result


SANITIZER_STAGE = SanitizerStage()
# Every exercise's stages, in the order they run.
EXERCISE_STAGES: tuple[Stage, ...] = (
    BuildStage(), IntegrityStage(), TechniqueStage(),
    TestsStage(), TechniqueOnWhatRan(), SANITIZER_STAGE,
    BenchmarkStage(), ProfileStage())
BESIDE_STAGES = tuple(s for s in EXERCISE_STAGES if s.beside_tests)
# The stages a re-run alone runs again (the technique rules on what ran follow them).
PROGRAM_STAGES = frozenset(s.name for s in EXERCISE_STAGES
                           if s.phase == Phase.PROGRAM and s.student_code)


class _EarlySanitizer:
    """The sanitizer stage started beside the tests (SanitizerStage.starts_early): its result
    when the stage applies once the tests have run, else its runs ended and dropped."""

    def __init__(self, context: Context) -> None:
        self.cancel = threading.Event()
        self.value: model.StageResult | BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(context,), daemon=True,
                                       name=f"sanitizer-{context.ex.name}")
        self.thread.start()

    @classmethod
    def start(cls, context: Context) -> _EarlySanitizer | None:
        return cls(context) if SANITIZER_STAGE.starts_early(context) else None

    def _run(self, context: Context) -> None:
        try:
            self.value = context.grader.timed(
                context.ex, StageName.SANITIZER, context.alone,
                partial(SANITIZER_STAGE.run, context, self.cancel))
        except BaseException as error:  # handed to the thread that takes the result
            self.value = error

    def result(self) -> model.StageResult:
        self.thread.join()
        if isinstance(self.value, BaseException):
            raise self.value
        taken, self.value = self.value, None
        self.thread = None
        return taken

    def drop(self) -> None:
        if self.thread is not None:
            self.cancel.set()
            self.thread.join()
            self.thread = None


def _on_a_thread(work: Callable[..., model.StageResult], *args) -> Future:
    """work(*args) on a thread of its own; its result or exception in the future."""
    future: Future = Future()

    def run() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(work(*args))
            except BaseException as error:  # handed to the thread that takes the result
                future.set_exception(error)

    threading.Thread(target=run, daemon=True, name="beside-tests").start()
    return future


@dataclass
class _Checked:
    """An exercise after the untimed stages: the stages so far, and whether it ended there
    (not submitted, refused, not built or trusted, not run here) or waits for its benchmark.
    `beside`: check stages running beside the tests, each with the place of its result."""
    ex: Exercise
    stages: list[model.StageResult] = field(default_factory=list)
    ended: bool = False
    missing: list[str] = field(default_factory=list)
    not_run: str = ""
    beside: list[tuple[int, Future]] = field(default_factory=list)
    program_later: bool = False  # its program stages wait until the other exercises' end

    def result(self, name: StageName) -> model.StageResult | None:
        return next((s for s in self.stages if s.name == name), None)

    def replace(self, result: model.StageResult) -> None:
        self.stages = [result if s.name == result.name else s for s in self.stages]

    def take_beside(self) -> None:
        """The results of the stages that ran beside the tests, in their places."""
        for place, future in sorted(self.beside, key=lambda b: -b[0]):
            self.stages.insert(place, future.result())
        self.beside.clear()


def _why(stage: model.StageResult) -> str:
    """A run's message, with its first case that did not pass and what that case said."""
    case = next((c for c in stage.cases if c.status not in (model.CaseStatus.PASSED,
                                                            model.CaseStatus.SKIPPED)), None)
    if case is None:
        return stage.message
    return f"{stage.message}; {case.name}: {case.status}" + \
        (f": {case.message[:300]}" if case.message else "")


class Grader:
    def __init__(self, options: GradeOptions, exercises: list[Exercise],
                 progress: Callable[[str], None] | None = None,
                 gpu: model.GpuInfo | None = None):
        self.options = options
        self.exercises = exercises
        self.progress = progress or (lambda _message: None)
        self.gpu = gpu
        self.build_log = ""  # build_all's output, for the warnings of files that compiled
        # Exercises whose sources name files outside the submission and the course's headers:
        # their refused build stage; they are never compiled (grader/stages/sources.py).
        self.refused: dict[str, model.StageResult] = {}
        # Turns on the GPU with the machine's other graders, and foreign load looked for
        # around every measurement (grader/gpu_turns.py, grader/gpu_load.py).
        self.turns, watch = self._sharing()
        self.alone = Alone(self.turns, watch, self.progress, options.allow_shared_gpu)
        # Each shared ceiling is measured once per run.
        self.ceilings = Ceilings(options, self.progress, self.alone)
        self.started = time.monotonic()
        self.timeline: list[dict] = []  # Report.timeline, appended by the stages' threads
        self._timeline_lock = threading.Lock()

    def timed(self, ex: Exercise, name: StageName, alone: bool,
              work: Callable[[], model.StageResult]) -> model.StageResult:
        """work(), its start and end kept for Report.timeline."""
        start = time.monotonic() - self.started
        try:
            return work()
        finally:
            row = {"exercise": ex.key, "stage": str(name), "start_s": round(start, 2),
                   "end_s": round(time.monotonic() - self.started, 2), "alone": alone}
            with self._timeline_lock:
                self.timeline.append(row)

    def _sharing(self) -> tuple[GpuTurns | None, LoadWatch | None]:
        if self.options.build_only or self.gpu is None or not self.gpu.uuid:
            return None, None
        turns = GpuTurns(self.gpu.uuid, str(self.options.submission), self.progress)
        probe = gpu_load.probe_for(self.gpu.uuid)
        return turns, (LoadWatch(probe) if probe is not None else None)

    def run(self) -> model.Report:
        # One grader per build folder: a second one (the same submission graded again before
        # the first ended) waits, saying for whom (grader/folder_lock.py).
        self.options.build_dir.mkdir(parents=True, exist_ok=True)
        with folder_lock.build_folder(self.options.build_dir, str(self.options.submission),
                                      self.progress):
            return self._run()

    def _run(self) -> model.Report:
        report = model.Report(
            submission=str(self.options.submission), seed=self.options.seed,
            started_at=model.now(), grader_version=__version__, gpu=self.gpu,
            host=platform.node(),
            options={"build_only": self.options.build_only,
                     "sanitizer": self.options.sanitizer,
                     "benchmark": self.options.benchmark,
                     "profile": self.options.profile,
                     "cuda_arch": self.options.cuda_arch,
                     "hidden": self.options.hidden,
                     "secret": self.options.secret is not None,
                     "allow_shared_gpu": self.options.allow_shared_gpu})
        self.options.build_dir.mkdir(parents=True, exist_ok=True)
        if self.options.work_dir.exists():
            shutil.rmtree(self.options.work_dir, ignore_errors=True)
        clock = self.started = time.monotonic()

        def phase(name: str) -> None:
            nonlocal clock
            now = time.monotonic()
            report.phases[f"{name}_s"] = round(now - clock, 1)
            clock = now

        build.configure(self.options, self.progress)
        self._prepare_sandbox()
        report.sandbox = self.options.sandbox.record()
        phase("configure")
        workers = self.options.parallel or default_parallel(self.gpu, self.options.build_only)
        # Fewer exercises than workers (a student's re-grade of one): the spare workers run an
        # exercise's sanitizer tools at once and split its test cases over a few processes,
        # instead of idling.
        spare = max(1, workers // max(1, len(self.exercises)))
        self.options.sanitizer_tools_at_once = spare
        self.options.test_shards = min(MAX_TEST_SHARDS, spare)
        checked = self._build_and_check_all(workers, lambda: phase("build"))
        phase("checks")
        # The timed stages (the benchmarks), one after another, then the shared ceilings they
        # recorded, each ceilings program once (grader/stages/ceilings.py), then the scores.
        for item in checked:
            if not item.ended:
                started = time.monotonic()
                self._run_stages(item, Phase.TIMED)
                if item.ex.performance and self.options.benchmark:
                    self.progress(f"benchmarked {item.ex.key} "
                                  f"({time.monotonic() - started:.1f} s)")
        phase("benchmarks")
        if self.options.profile:  # the profiles ran after each benchmark: their own phase
            profiled = sum(stage.duration_s for item in checked for stage in item.stages
                           if stage.name == StageName.PROFILE)
            report.phases["benchmarks_s"] = round(max(0.0, report.phases["benchmarks_s"]
                                                      - profiled), 1)
            report.phases["profile_s"] = round(profiled, 1)
        self.ceilings.prepare([(item.ex, stage.details.measurements)
                               for item in checked if not item.ended
                               for stage in item.stages
                               if stage.name == StageName.BENCHMARK
                               and benchmark.waiting_for_ratios(stage)])
        phase("ceilings")
        for i, item in enumerate(checked, 1):
            outcome = self._finish(item)
            report.exercises.append(outcome)
            self.progress(f"[{i}/{len(self.exercises)}] {item.ex.key}: {outcome.status}, "
                          f"{outcome.score:g}/{outcome.max_score:g}")
        report.sharing = self._sharing_record()
        report.timeline = sorted(self.timeline, key=lambda row: row["start_s"])
        check_times.save(self.options.build_dir, self.exercises, self.timeline)
        report.finished_at = model.now()
        return report

    def _prepare_sandbox(self) -> None:
        """The sandbox every student program runs in, from the launcher this build directory
        holds (grader/sandbox.py); a required one that this machine cannot give stops the
        grade here (GraderError). A build-only grade runs no student program."""
        if self.options.build_only or self.options.sandbox_mode == sandbox.Mode.OFF:
            self.options.sandbox = sandbox.OFF if not self.options.build_only else \
                sandbox.Sandbox(sandbox.Status.OFF, "--build-only: no program runs")
            return
        build.build_launcher(self.options)
        self.options.sandbox = sandbox.prepare(self.options.sandbox_mode, self.options.build_dir)
        self.progress(self.options.sandbox.describe())

    def _sharing_record(self) -> dict:
        if self.turns is None:
            return {}
        return {"gpu_uuid": self.turns.uuid, "waited_s": round(self.turns.waited_s, 1),
                "load_watched": self.alone.watch is not None,
                "measured_again": self.alone.disturbed, "not_measured": self.alone.gave_up,
                "allow_shared_gpu": self.options.allow_shared_gpu}

    def grade_exercise(self, ex: Exercise) -> model.ExerciseResult:
        """The exercise's result, alone, hidden cases and a secret seed kept out of it."""
        return self._finish(self._check(ex))

    def _build_and_check_all(self, workers: int, built: Callable[[], None]) -> list[_Checked]:
        """The build of every exercise, then every exercise through the untimed stages,
        `workers` at a time; then the tests and sanitizer runs that ended in a way the
        neighbours could have caused, again alone (_load_may_explain). With several workers
        the build runs in waves, longest checks first, and an exercise's checks start as soon
        as its programs have linked, while the rest still builds; those whose tests hold the
        GPU alone run their programs after the rest. built() is called when the build has
        ended."""
        total = len(self.exercises)
        position = {ex.name: i for i, ex in enumerate(self.exercises, 1)}
        for ex in self.exercises:
            refused = None if self._missing(ex) else sources.check(self.options, ex)
            if refused is not None:
                self.refused[ex.name] = refused
        buildable = [ex for ex in self.exercises
                     if not self._missing(ex) and ex.name not in self.refused]

        # An exercise whose tests hold the GPU alone would stop every other exercise's
        # programs while it waits for the GPU to drain and while it runs: its programs run
        # after theirs instead, when nothing else waits.
        others_use_gpu = any(not ex.tests_alone for ex in buildable)

        def check(i: int, ex: Exercise, linked: model.StageResult | None = None) -> _Checked:
            self.progress(f"[{i}/{total}] {ex.key}: checking")
            started = time.monotonic()
            item = self._check(ex, linked, program_later=ex.tests_alone and others_use_gpu)
            if not item.program_later:
                self.progress(f"[{i}/{total}] {ex.key}: checked "
                              f"({time.monotonic() - started:.1f} s)")
            return item

        def run_programs_alone(checked: list[_Checked]) -> None:
            for i, item in enumerate(checked, 1):
                if item.program_later:
                    started = time.monotonic()
                    self._run_programs(item)
                    self.progress(f"[{i}/{total}] {item.ex.key}: checked, alone "
                                  f"({time.monotonic() - started:.1f} s)")

        if workers <= 1:
            self.build_log = build.build_all(self.options, buildable, self.progress)
            built()
            checked = [check(i, ex) for i, ex in enumerate(self.exercises, 1)]
            run_programs_alone(checked)
            return checked
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="exercise")
        futures: dict[int, Future] = {}

        def start_early(ex: Exercise, log: str) -> None:  # on the build's thread
            i = position[ex.name]
            if i not in futures:
                futures[i] = pool.submit(check, i, ex, build.linked(ex, log))

        ended: dict[str, BaseException] = {}

        # Built in waves, longest checks first (check_times.expected) and those whose tests
        # hold the GPU alone last, so that the first checks start early and none long last;
        # --build-only has no programs to run early, only a build that waves would lengthen.
        last = check_times.load(self.options.build_dir)
        in_order = sorted(buildable, key=lambda ex: (ex.tests_alone,
                                                     -check_times.expected(ex, last)))

        def build_everything() -> None:
            try:
                self.build_log = build.build_all(self.options, in_order, self.progress,
                                                 on_built=start_early,
                                                 first_wave=0 if self.options.build_only
                                                 else workers)
            except BaseException as error:  # handed to the main thread
                ended["error"] = error

        builder = threading.Thread(target=build_everything, name="build", daemon=True)

        def raise_first_error(pending) -> None:
            for future in pending:
                if future.done() and future.exception() is not None:
                    raise future.exception()

        try:
            builder.start()
            while builder.is_alive():  # in short waits, so that a signal reaches this thread
                builder.join(0.5)
                raise_first_error(list(futures.values()))
            if "error" in ended:
                raise ended["error"]
            built()
            # The rest (not linked during the build, or failed) builds again alone in
            # _check, so that its build stage names the compiler's errors. The longest
            # checks of this build folder's last grade first: no long one starts last.
            rest = [(i, ex) for i, ex in enumerate(self.exercises, 1) if i not in futures]
            for i, ex in sorted(rest, key=lambda pair: -check_times.expected(pair[1], last)):
                futures[i] = pool.submit(check, i, ex)
            pending = set(futures.values())
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_EXCEPTION)
                raise_first_error(done)
            checked = [futures[i].result() for i in range(1, total + 1)]
        except BaseException:
            # Ctrl-C reaches this thread only: end what the other threads are running.
            proc.stop_all()
            builder.join()
            pool.shutdown(wait=True, cancel_futures=True)
            proc.resume()
            raise
        pool.shutdown(wait=True)
        run_programs_alone(checked)
        for item in checked:
            if self._load_may_explain(item):
                self.progress(f"{item.ex.key}: did not pass while other exercises ran; "
                              "running its tests again alone")
                self._run_alone(item)
        return checked

    @staticmethod
    def _load_may_explain(item: _Checked) -> bool:
        """Whether the tests or sanitizer stage ended in a way the neighbours could have
        caused: out of time, a crash, an early exit, a tool that could not check, or a failed
        case whose kind the test main says they may cause (out of memory, a leak check). A
        plain wrong answer or a sanitizer finding is the code's own, so it is not run again (a
        class of skeletons would otherwise run every exercise twice, the second time one after
        another)."""
        for stage in item.stages:
            if stage.name not in PROGRAM_STAGES or stage.status in (StageStatus.PASSED,
                                                                     StageStatus.SKIPPED):
                continue
            if stage.status != StageStatus.FAILED:
                return True
            if any(c.status in (model.CaseStatus.TIMED_OUT, model.CaseStatus.CRASHED)
                   for c in stage.cases):
                return True
            if getattr(stage.details, "failure_kinds", set()) & NEIGHBOURS_MAY_CAUSE:
                return True
        return False

    def _run_alone(self, item: _Checked) -> None:
        """The program stages that did not pass among the others again, now alone on the GPU
        (no other grader's programs either); what passed among them, and the compiled-code
        checks, stand. A tests run that ended well but for cases the neighbours may have made
        fail (TestsDetails.neighbour_cases) runs only those cases again. The status among the
        others, and why, are kept in the details."""
        before = {s.name: s for s in item.stages}
        order = [s.name for s in item.stages]
        kept = {name for name, s in before.items() if name in PROGRAM_STAGES
                and s.status in (StageStatus.PASSED, StageStatus.SKIPPED)}
        tests_before = before.get(StageName.TESTS)
        only = list(tests_before.details.neighbour_cases) \
            if tests_before is not None and StageName.TESTS not in kept else []
        if any(ch in name for name in only for ch in "-:*?"):  # not a GoogleTest filter
            only = []
        again = _Checked(item.ex, [s for s in item.stages
                                   if s.name not in PROGRAM_STAGES or s.name in kept])
        skip = set(kept) | ({StageName.TECHNIQUE} if StageName.TESTS in kept else set())
        # The cases alone launch only some of the kernels: the technique rules' verdict on
        # what the first run (which reported every case) launched stands.
        self._run_stages(again, Phase.PROGRAM, alone=True, only_cases=only,
                         skip=skip | ({StageName.TECHNIQUE} if only else set()))
        if only:
            merged = tests.again_alone(tests_before, again.result(StageName.TESTS))
            if merged is None:  # the cases alone did not end well: the whole run alone
                again = _Checked(item.ex, [s for s in again.stages
                                           if s.name not in PROGRAM_STAGES or s.name in kept])
                self._run_stages(again, Phase.PROGRAM, alone=True, skip=skip)
            else:
                again.replace(merged)
        for stage in again.stages:
            if stage.name in PROGRAM_STAGES and stage.name in before \
                    and stage.name not in kept:
                first = before[stage.name]
                stage.details.among_others = str(first.status)
                stage.details.among_others_why = _why(first)
        again.stages.sort(key=lambda s: order.index(s.name) if s.name in order else len(order))
        item.stages, item.ended = again.stages, again.ended

    def _finish(self, item: _Checked) -> model.ExerciseResult:
        """The benchmark (alone on the GPU) unless it ran already, its ratios, and the score;
        hidden cases and a secret seed kept out of the result."""
        if not item.ended:
            if not any(stage.name == StageName.BENCHMARK for stage in item.stages):
                self._run_stages(item, Phase.TIMED)
            for stage in item.stages:
                if stage.name == StageName.BENCHMARK:
                    benchmark.ratios(item.ex, stage, self.ceilings)
        result = scoring.score(item.ex, item.stages, missing=item.missing,
                               folder=self.options.submission / item.ex.chapter,
                               not_run=item.not_run)
        secret_seed = self.options.input_seed if self.options.secret else None
        return hidden.redact(result, secret_seed)

    def _check(self, ex: Exercise, linked: model.StageResult | None = None,
               program_later: bool = False) -> _Checked:
        """The untimed stages: the exercise ended where one of them ends it (or its files are
        missing, or it cannot run here), else its stages so far, waiting for the timed ones.
        `linked`: the build stage, when the build of every exercise has linked it.
        `program_later`: the compiled-code checks only; _run_programs() runs the rest."""
        item = _Checked(ex, missing=self._missing(ex))
        if item.missing:
            item.ended = True
            return item
        # With cores to spare (a re-grade of a few exercises), the check stages that allow it
        # run beside the tests, when the tests will run.
        beside = self.options.sanitizer_tools_at_once > 1 and not self._why_not_run(ex)
        try:
            self._run_stages(item, Phase.CHECK, linked=linked, beside=beside)
            if not item.ended:
                item.not_run = self._why_not_run(ex)
                item.ended = bool(item.not_run)
            if not item.ended:
                if program_later:
                    item.program_later = True
                else:
                    self._run_stages(item, Phase.PROGRAM)
        finally:
            item.take_beside()
        return item

    def _run_programs(self, item: _Checked) -> None:
        """The program stages of an exercise whose compiled-code checks ran (_check with
        program_later)."""
        item.program_later = False
        self._run_stages(item, Phase.PROGRAM)

    def _run_stages(self, item: _Checked, phase: Phase, *, alone: bool = False,
                    linked: model.StageResult | None = None, beside: bool = False,
                    skip: set[StageName] = frozenset(), only_cases: list[str] = ()) -> None:
        """EXERCISE_STAGES of `phase`, in order, for `item`: each that applies runs and its
        result is recorded; one that ends the exercise stops it. `beside`: a stage that may
        run beside the tests starts on a thread of its own, its result taken (item.beside)
        before a later stage of the same name runs, or when the checks end. `skip`: stages
        whose results stand; `only_cases`: the tests stage runs these cases only."""
        context = Context(self, item.ex, item.stages, alone=alone, linked=linked,
                          only_cases=list(only_cases))
        early = _EarlySanitizer.start(context) \
            if phase == Phase.PROGRAM and StageName.SANITIZER not in skip else None
        try:
            for stage in EXERCISE_STAGES:
                if item.ended or stage.phase != phase or stage.name in skip:
                    continue
                if item.beside and not stage.beside_tests and \
                        stage.name in (s.name for s in BESIDE_STAGES):
                    item.take_beside()  # what this stage reads
                if not stage.applies(context):
                    continue
                if beside and stage.beside_tests:
                    item.beside.append((len(item.stages), _on_a_thread(
                        self.timed, item.ex, stage.name, alone, partial(stage.run, context))))
                    continue
                result = early.result() if early and stage.name == StageName.SANITIZER \
                    else self.timed(item.ex, stage.name, alone, partial(stage.run, context))
                context.record(result)
                item.ended = stage.ends(result)
        finally:
            if early is not None:
                early.drop()  # not taken (the tests timed out or ended the exercise): ended

    def _missing(self, ex: Exercise) -> list[str]:
        """The exercise's files missing from the submission (nothing is taken from elsewhere)."""
        folder = self.options.submission / ex.chapter
        return [f for f in ex.files if not (folder / f).is_file()]

    def _why_not_run(self, ex: Exercise) -> str:
        """Why a compiled exercise cannot run here, or "" when it can."""
        if self.options.build_only:
            return "compiled (--build-only: not run)"
        if self.gpu is not None and ex.min_cc > 7.0:
            try:
                cc = float(self.gpu.compute_capability)
            except ValueError:
                cc = 0.0
            if cc < ex.min_cc:
                return f"needs compute capability {ex.min_cc}, this GPU has " \
                       f"{self.gpu.compute_capability}"
        return ""
