"""The grading pipeline: configure and build everything once, then for each exercise the
not-submitted check, build, integrity and technique (which read the compiled code, so they run
with --build-only and without a GPU; code that calls what it must not is rejected before it
runs), tests, sanitizer and benchmark (grader/stages/), and the scorer (grader/scoring.py) last.

Every stage runs its program through grader.proc.run, in its own process group with a time
limit and bounded output, so one exercise's compile error, crash, hang, early exit or flood of
output costs that exercise only.

The stages up to the sanitizer are not timed, so several exercises run them at once
(options.parallel, by default from the GPU's memory and the host's cores); a tests or
sanitizer stage that ended among neighbours in a way they could have caused (out of time or
memory, a crash) is run again alone, and that run is the verdict, so the load of other
exercises never costs a student points. The benchmarks come last, one at a time, with nothing
else running; then the shared ceilings they recorded (grader/stages/ceilings.py), each
course-only ceilings program once, alone too; then the ratios and the scores.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import time
import threading
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable

from grader import (__version__, folder_lock, gpu_load, gpu_turns, hidden, model, proc,
                    sandbox, scoring)
from grader.gpu_load import LoadWatch
from grader.gpu_turns import GpuTurns
from grader.manifest import Exercise
from grader.model import StageStatus
from grader.stages import benchmark, build, integrity, sanitizer, sources, technique, tests
from grader.stages.ceilings import Ceilings
from grader.stages.common import GradeOptions
from grader.stages.measured import Alone


# Exercises checked at once by default: at most this many, one per two host cores and per
# this much GPU memory (a test program's context and buffers, under a sanitizer too).
MAX_PARALLEL = 8
GPU_MIB_PER_EXERCISE = 10 * 1024


# The stages that run the student's code on the GPU before the benchmark.
PROGRAM_STAGES = ("tests", "sanitizer")


def default_parallel(gpu: model.GpuInfo | None, build_only: bool = False,
                     cores: int | None = None) -> int:
    """One exercise per two host cores and per GPU_MIB_PER_EXERCISE of GPU memory, at most
    MAX_PARALLEL; without a GPU to share (--build-only) the cores alone decide."""
    if cores is None:  # the cores this process may use (a Slurm task's share, not the node's)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
    by_memory = MAX_PARALLEL if build_only else \
        (gpu.memory_mib // GPU_MIB_PER_EXERCISE if gpu and gpu.memory_mib else 1)
    return max(1, min(MAX_PARALLEL, cores // 2, by_memory))


# Failures whose message shows a cause the neighbours share: running out of GPU or host memory,
# and the course's leak checks (course::testing::DeviceMemoryWatch, whose failures start with
# kDeviceMemoryLeaked), which compare the device's free memory before and after a call (other
# programs allocating in between make a clean call look leaky).
LEAK_MARKER = "device memory leaked"
_NEIGHBOURS_MAY_CAUSE = re.compile(
    r"out of memory|MemoryAllocation|std::bad_alloc|cannot allocate|" + re.escape(LEAK_MARKER),
    re.IGNORECASE)


@dataclass
class _Checked:
    """An exercise after the untimed stages: its final result when it ended there, else the
    stages so far, waiting for its benchmark."""
    ex: Exercise
    result: model.ExerciseResult | None = None
    stages: list[model.StageResult] = field(default_factory=list)

    @property
    def stages_so_far(self) -> list[model.StageResult]:
        return self.result.stages if self.result is not None else self.stages


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
                     "cuda_arch": self.options.cuda_arch,
                     "hidden": self.options.hidden,
                     "secret": self.options.secret is not None,
                     "allow_shared_gpu": self.options.allow_shared_gpu})
        self.options.build_dir.mkdir(parents=True, exist_ok=True)
        if self.options.work_dir.exists():
            shutil.rmtree(self.options.work_dir, ignore_errors=True)
        clock = time.monotonic()

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
        checked = self._build_and_check_all(workers, lambda: phase("build"))
        phase("checks")
        # The benchmarks, one after another, then the shared ceilings they recorded, each
        # ceilings program once (grader/stages/ceilings.py), then the scores.
        for item in checked:
            if item.result is None:
                started = time.monotonic()
                self._benchmark(item.ex, item.stages)
                if item.ex.performance and self.options.benchmark:
                    self.progress(f"benchmarked {item.ex.key} "
                                  f"({time.monotonic() - started:.1f} s)")
        phase("benchmarks")
        self.ceilings.prepare([(item.ex, stage.details["measurements"])
                               for item in checked if item.result is None
                               for stage in item.stages[-1:]
                               if benchmark.waiting_for_ratios(stage)])
        phase("ceilings")
        for i, item in enumerate(checked, 1):
            outcome = self._finish(item)
            report.exercises.append(outcome)
            self.progress(f"[{i}/{len(self.exercises)}] {item.ex.key}: {outcome.status}, "
                          f"{outcome.score:g}/{outcome.max_score:g}")
        report.sharing = self._sharing_record()
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
        """The one build of every exercise, then every exercise through the untimed stages,
        `workers` at a time, in roster order; then the tests and sanitizer runs that ended in
        a way the neighbours could have caused, again alone (_load_may_explain). With several workers, an exercise's checks start
        as soon as its programs have linked, while the rest still builds. built() is called
        when the build has ended."""
        total = len(self.exercises)
        position = {ex.name: i for i, ex in enumerate(self.exercises, 1)}
        for ex in self.exercises:
            refused = None if self._missing(ex) else sources.check(self.options, ex)
            if refused is not None:
                self.refused[ex.name] = refused
        buildable = [ex for ex in self.exercises
                     if not self._missing(ex) and ex.name not in self.refused]

        def check(i: int, ex: Exercise, linked: model.StageResult | None = None) -> _Checked:
            self.progress(f"[{i}/{total}] {ex.key}: checking")
            started = time.monotonic()
            item = self._check(ex, linked)
            self.progress(f"[{i}/{total}] {ex.key}: checked ({time.monotonic() - started:.1f} s)")
            return item

        if workers <= 1:
            self.build_log = build.build_all(self.options, buildable, self.progress)
            built()
            return [check(i, ex) for i, ex in enumerate(self.exercises, 1)]
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="exercise")
        futures: dict[int, Future] = {}

        def start_early(ex: Exercise, log: str) -> None:  # on the build's thread
            i = position[ex.name]
            if i not in futures:
                futures[i] = pool.submit(check, i, ex, build.linked(ex, log))

        ended: dict[str, BaseException] = {}

        def build_everything() -> None:
            try:
                self.build_log = build.build_all(self.options, buildable, self.progress,
                                                 on_built=start_early)
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
            # _check, so that its build stage names the compiler's errors.
            for i, ex in enumerate(self.exercises, 1):
                if i not in futures:
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
        for item in checked:
            if self._load_may_explain(item):
                self.progress(f"{item.ex.key}: did not pass while other exercises ran; "
                              "running its tests again alone")
                self._run_alone(item)
        return checked

    @staticmethod
    def _load_may_explain(item: _Checked) -> bool:
        """Whether the tests or sanitizer stage ended in a way the neighbours could have
        caused: out of time, out of memory, a leak check, a crash, an early exit, a tool that
        could not check. A plain wrong answer or a sanitizer finding is the code's own, so it is not run
        again (a class of skeletons would otherwise run every exercise twice, the second time
        one after another)."""
        for stage in item.stages_so_far:
            if stage.name not in PROGRAM_STAGES or stage.status in (StageStatus.PASSED,
                                                                     StageStatus.SKIPPED):
                continue
            if stage.status != StageStatus.FAILED:
                return True
            if any(c.status in (model.CaseStatus.TIMED_OUT, model.CaseStatus.CRASHED)
                   for c in stage.cases):
                return True
            said = "\n".join([stage.message, stage.output] + [c.message for c in stage.cases])
            if _NEIGHBOURS_MAY_CAUSE.search(said):
                return True
        return False

    def _run_alone(self, item: _Checked) -> None:
        """The tests and sanitizer again, now alone on the GPU (no other grader's programs
        either); the compiled-code checks stand."""
        before = {s.name: s.status for s in item.stages_so_far}
        again = self._run_programs(
            item.ex, [s for s in item.stages_so_far if s.name not in PROGRAM_STAGES],
            alone=True)
        for stage in again.stages_so_far:
            if stage.name in PROGRAM_STAGES and stage.name in before:
                stage.details["among_others"] = str(before[stage.name])
        item.result, item.stages = again.result, again.stages

    def _finish(self, item: _Checked) -> model.ExerciseResult:
        """The benchmark (alone on the GPU) unless it ran already, its ratios and the score;
        hidden cases and a secret seed kept out of the result."""
        secret_seed = self.options.input_seed if self.options.secret else None
        result = item.result
        if result is None:
            if not any(stage.name == "benchmark" for stage in item.stages):
                self._benchmark(item.ex, item.stages)
            bench = item.stages[-1]
            if bench.name == "benchmark":
                benchmark.ratios(item.ex, bench, self.ceilings)
            result = scoring.grade(item.ex, item.stages)
        return hidden.redact(result, secret_seed)

    def _check(self, ex: Exercise, linked: model.StageResult | None = None) -> _Checked:
        """The stages before the benchmark: a final result where one of them ends the
        exercise, else the stages so far. `linked`: the build stage, when the one build of
        every exercise has already linked this one's programs."""
        missing = self._missing(ex)
        if missing:
            return _Checked(ex, scoring.not_submitted(ex, missing,
                                                      self.options.submission / ex.chapter))

        refused = self.refused.get(ex.name) or (None if linked else
                                                sources.check(self.options, ex))
        if refused is not None:
            return _Checked(ex, scoring.refused_sources(ex, refused))
        built = linked or build.run(self.options, ex, self.build_log)
        if built.status != StageStatus.PASSED:
            return _Checked(ex, scoring.grade(ex, [built]))
        stages = [built]
        trusted = integrity.run(self.options, ex)
        stages.append(trusted)
        if trusted.status != StageStatus.PASSED:
            return _Checked(ex, scoring.not_trusted(ex, stages))
        if ex.technique:
            stages.append(technique.run(self.options, ex))
        why_not = self._why_not_run(ex)
        if why_not:
            return _Checked(ex, scoring.not_run(ex, stages, why_not))
        return self._run_programs(ex, stages)

    def _run_programs(self, ex: Exercise, stages: list[model.StageResult],
                      alone: bool = False) -> _Checked:
        """The tests, then the sanitizer, after the compiled-code stages in `stages`: each
        program in a shared turn on the GPU, or alone where the exercise's verdicts depend on
        timing or free resources (its manifest's `alone`) or the run is a re-run alone."""
        test_binary = self.options.build_dir / f"{ex.name}_test"
        alone = alone or ex.tests_alone
        with gpu_turns.maybe(self.turns, f"the tests of {ex.key}", alone):
            tested = tests.run(self.options, ex, test_binary)
        stages.append(tested)
        if tested.status == StageStatus.SKIPPED:
            return _Checked(ex, scoring.grade(ex, stages))
        self._technique_on_what_ran(ex, stages, tested)

        if (self.options.sanitizer and tested.status != StageStatus.TIMED_OUT
                and "stopped" not in tested.details):  # a case never ends: nothing to check
            with gpu_turns.maybe(self.turns, f"the sanitizer runs of {ex.key}", alone):
                stages.append(sanitizer.run(self.options, ex, test_binary))
        return _Checked(ex, None, stages)

    def _technique_on_what_ran(self, ex: Exercise, stages: list[model.StageResult],
                               tested: model.StageResult) -> None:
        """The technique rules again, now counting only the kernels the test run launched
        (support/src/launch_record.cpp) and those they launch from the device: a rule met by
        a kernel that never ran is not met. Only a run that reported every case counts (a run
        cut short launched less than the code does, and the compiled code's verdict stands)."""
        launched = tested.details.get("launched_kernels")
        if not ex.technique or not launched or tested.status not in (StageStatus.PASSED,
                                                                     StageStatus.FAILED):
            return
        if any(c.status == model.CaseStatus.NOT_RUN for c in tested.cases):
            return
        for i, stage in enumerate(stages):
            if stage.name == "technique" and stage.status != StageStatus.ERROR:
                stages[i] = technique.run(self.options, ex, set(launched))

    def _benchmark(self, ex: Exercise, stages: list[model.StageResult]) -> None:
        """Appends the benchmark stage (its ratios wait for the shared ceilings) where the
        exercise has performance criteria."""
        if not ex.performance:
            return
        if not self.options.benchmark:
            stages.append(benchmark.not_run("not run (--no-benchmark)"))
        elif not scoring.correct(stages):
            stages.append(benchmark.not_run(
                "not run: the exercise must pass its tests and the sanitizer first"))
        else:
            binary = self.options.build_dir / f"{ex.name}_bench"
            measured = self.alone.measure(f"the benchmark of {ex.key}",
                                          lambda: benchmark.run(self.options, ex, binary),
                                          suspect=benchmark.timing_suspect)
            stages.append(benchmark.from_measured(ex, measured))

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
