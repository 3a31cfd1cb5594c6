"""The grading pipeline: configure and build, then per exercise tests, sanitizer, benchmark.

Every stage of every exercise runs its program through grader.proc.run, in its own process
group with a time limit and bounded output, so one exercise's compile error, crash, hang,
early exit or flood of output costs that exercise only.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grader import __version__, gtest, model, proc, scoring, tools
from grader.errors import GraderError
from grader.manifest import Exercise

SANITIZER_EXIT = 86
CONFIGURE_TIMEOUT_S = 600
BUILD_ALL_TIMEOUT_S = 3600
BUILD_ONE_TIMEOUT_S = 900
LIST_TIMEOUT_S = 60
MESSAGE_LIMIT = 8 * 1024


@dataclass
class GradeOptions:
    root: Path
    submission: Path
    build_dir: Path
    seed: int
    build_only: bool = False
    sanitizer: bool = True
    benchmark: bool = True
    jobs: int | None = None
    output_limit: int = proc.DEFAULT_OUTPUT_LIMIT
    cuda_arch: str = "auto"
    extra_env: dict = field(default_factory=dict)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n[... {len(text) - limit} characters cut ...]\n" + text[-half:]


def compiler_errors(output: str) -> str:
    """The part of ninja's output worth showing: from the first FAILED: line on."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("FAILED:"):
            keep = [l for l in lines[i:] if not l.startswith("ninja: build stopped")]
            return _clip("\n".join(keep))
    return _clip(output)


class Grader:
    def __init__(self, options: GradeOptions, exercises: list[Exercise],
                 progress: Callable[[str], None] | None = None,
                 gpu: model.GpuInfo | None = None):
        self.options = options
        self.exercises = exercises
        self.progress = progress or (lambda _message: None)
        self.gpu = gpu
        self.work = options.build_dir / "grading"

    # ---------------------------------------------------------------- build
    def configure(self) -> None:
        meson = tools.find("meson", "to configure the build")
        build = self.options.build_dir
        args = [meson, "setup"]
        if (build / "build.ninja").is_file():
            args.append("--reconfigure")
        args += [str(build), str(self.options.root),
                 f"-Dsubmission={self.options.submission}",
                 f"-Dgpu_arch={self.options.cuda_arch}"]
        self.progress(f"configuring {build}")
        result = proc.run(args, CONFIGURE_TIMEOUT_S, output_limit=256 * 1024)
        if result.returncode != 0:
            problem = next((l for l in result.output.splitlines()
                            if "ERROR:" in l), result.describe_exit())
            raise GraderError(f"configuring the build failed: {problem.strip()} "
                              f"(full log: {build}/meson-logs/meson-log.txt)")

    def build_everything(self, targets: list[str]) -> None:
        """One parallel build of all targets, failures and all (-k 0); per-exercise results
        come from build_exercise afterwards, which then finds little or nothing to do."""
        if not targets:
            return
        ninja = tools.find("ninja", "to build")
        args = [ninja, "-C", str(self.options.build_dir), "-k", "0"]
        if self.options.jobs:
            args += ["-j", str(self.options.jobs)]
        self.progress(f"building {len(targets) // 2} exercises")
        proc.run(args + targets, BUILD_ALL_TIMEOUT_S, output_limit=64 * 1024)

    def build_exercise(self, ex: Exercise) -> model.StageResult:
        ninja = tools.find("ninja", "to build")
        result = proc.run([ninja, "-C", str(self.options.build_dir), f"{ex.name}_test",
                           f"{ex.name}_bench"], BUILD_ONE_TIMEOUT_S,
                          output_limit=self.options.output_limit)
        stage = model.StageResult("build", "passed", duration_s=round(result.duration_s, 2))
        if result.returncode != 0:
            stage.status = "timed_out" if result.timed_out else "failed"
            stage.message = ("the build timed out" if result.timed_out else
                             "compilation failed; the compiler said:")
            stage.output = compiler_errors(result.output)
        return stage

    # ---------------------------------------------------------------- tests
    def _env(self, ex: Exercise, **extra: str) -> dict:
        env = dict(os.environ)
        env.update({"COURSE_SEED": str(self.options.seed), "GTEST_COLOR": "no",
                    "CUDA_MODULE_LOADING": "EAGER"})
        env.update(self.options.extra_env)
        env.update(extra)
        return env

    def run_tests(self, ex: Exercise, binary: Path, stage_name: str = "tests",
                  gtest_filter: str | None = None, wrapper: list[str] | None = None,
                  timeout_s: float | None = None) -> tuple[model.StageResult, list[str]]:
        work = self.work / ex.name
        work.mkdir(parents=True, exist_ok=True)
        report = work / f"{stage_name}.json"
        events = work / f"{stage_name}.events"
        premature = work / f"{stage_name}.premature"
        for f in (report, events, premature):
            f.unlink(missing_ok=True)

        filter_args = [f"--gtest_filter={gtest_filter}"] if gtest_filter else []
        listing = proc.run([str(binary), "--gtest_list_tests", *filter_args], LIST_TIMEOUT_S,
                           env=self._env(ex), output_limit=self.options.output_limit)
        expected = gtest.parse_list(listing.output) if listing.returncode == 0 else []
        # --gtest_list_tests lists disabled cases too, but they never run.
        expected = [name for name in expected if not _disabled(name)]

        command = (wrapper or []) + [str(binary), f"--gtest_output=json:{report}", *filter_args]
        result = proc.run(command, timeout_s or ex.test_timeout_s,
                          env=self._env(ex, COURSE_EVENTS=str(events),
                                        TEST_PREMATURE_EXIT_FILE=str(premature)),
                          output_limit=self.options.output_limit)
        outcome = gtest.collect(report, events)
        stage = model.StageResult(stage_name, "passed", duration_s=round(result.duration_s, 2),
                                  output=result.output if result.returncode != 0 else "")
        stage.details["exit"] = result.describe_exit()
        if result.truncated:
            stage.details["output_bytes"] = result.output_bytes

        if result.returncode == 77 and not outcome.cases:
            stage.status = "skipped"
            stage.message = "no GPU available to run the tests"
            return stage, []

        where = f" while running {outcome.running}" if outcome.running else ""
        died = not outcome.complete_report
        if result.timed_out:
            stage.status = "timed_out"
            stage.message = (f"timed out after {result.duration_s:.0f} s{where} "
                             "(a kernel that never finishes, or a deadlock at a barrier?)")
        elif result.signal_name:
            stage.status = "crashed"
            stage.message = f"crashed with {result.signal_name}{where}"
        elif died and premature.exists():
            stage.status = "exited_early"
            stage.message = (f"exited early with exit status {result.returncode}{where}, "
                             "before the tests finished: something called exit() or abort()")
        elif died and result.returncode not in (0, 1):
            stage.status = "crashed"
            stage.message = f"ended with {result.describe_exit()}{where} and wrote no results"
        elif died:
            stage.status = "crashed"
            stage.message = f"ended with {result.describe_exit()}{where} without a test report"

        names = expected or list(outcome.cases)
        for name in names:
            case = outcome.cases.get(name)
            if case is None:
                status = "not_run"
                if name == outcome.running:
                    status = "timed_out" if result.timed_out else "crashed"
                stage.cases.append(model.CaseResult(name, status, stage.message
                                                    if status != "not_run" else ""))
            else:
                stage.cases.append(model.CaseResult(name, case.status, _clip(case.message, 4096),
                                                    case.duration_ms))
        passed = sum(c.status == "passed" for c in stage.cases)
        reported = sum(c.status != "not_run" for c in stage.cases)
        stage.details["passed"] = passed
        stage.details["total"] = len(stage.cases)
        if stage.status == "passed":
            if not stage.cases:
                stage.status = "failed"
                stage.message = "no test cases ran"
            elif reported < len(stage.cases):
                stage.status = "failed"
                stage.message = (f"only {reported} of {len(stage.cases)} cases reported "
                                 f"({passed} passed)")
            elif passed < len(stage.cases):
                stage.status = "failed"
                stage.message = f"{passed} of {len(stage.cases)} cases passed"
            else:
                stage.message = f"all {passed} cases passed"
        return stage, expected

    # ------------------------------------------------------------ sanitizer
    def run_sanitizer(self, ex: Exercise, binary: Path) -> model.StageResult:
        sanitizer = tools.find("compute-sanitizer")
        stage = model.StageResult("sanitizer", "passed")
        if sanitizer is None:
            stage.status = "skipped"
            stage.message = "compute-sanitizer not found; memory checks were not run"
            return stage
        messages = []
        for tool in ex.sanitizer_tools:
            # Failed API calls are the tests' business (some exercises fail them on
            # purpose); the sanitizer is here for memory errors, races and barriers.
            wrapper = [sanitizer, "--tool", tool, "--error-exitcode", str(SANITIZER_EXIT),
                       "--print-limit", "20", "--report-api-errors", "no"]
            sub, _ = self.run_tests(ex, binary, stage_name=f"sanitizer-{tool}",
                                    gtest_filter=ex.sanitizer_filter, wrapper=wrapper,
                                    timeout_s=ex.sanitizer_timeout_s)
            stage.duration_s = round(stage.duration_s + sub.duration_s, 2)
            errors = _sanitizer_error_count(sub.output)
            found = errors > 0 or sub.details.get("exit") == f"exit status {SANITIZER_EXIT}"
            if sub.status == "skipped":
                stage.status = "skipped"
                stage.message = sub.message
                return stage
            if "Device not supported" in sub.output:
                stage.status = "error"
                stage.message = f"compute-sanitizer cannot run on this device ({tool})"
                stage.output = _clip(sub.output)
                return stage
            if not found and not sub.cases:
                stage.status = "error"
                stage.message = (f"the sanitizer filter {ex.sanitizer_filter!r} selects no test "
                                 "case: nothing was checked (a course bug, not yours)")
                return stage
            if not found and sub.status in ("passed", "failed"):
                # Cases failing without sanitizer errors are the tests stage's business.
                failed = sum(c.status != "passed" for c in sub.cases)
                messages.append(f"{tool}: clean" + (f" ({failed} cases failed under it)"
                                                    if failed else ""))
                continue
            stage.status = "failed"
            if found:
                count = f"{errors} error{'s' if errors != 1 else ''}" if errors else "errors"
                messages.append(f"{tool} found {count}")
            elif sub.status == "timed_out":
                messages.append(f"{tool}: {sub.message}")
            else:
                messages.append(f"{tool}: tests failed or crashed under the sanitizer "
                                f"({sub.message})")
            stage.output = _clip(_sanitizer_findings(sub.output))
            break  # one failing tool is enough to void correctness
        stage.message = "; ".join(messages)
        return stage

    # ------------------------------------------------------------ benchmark
    def run_benchmark(self, ex: Exercise, binary: Path) -> model.StageResult:
        stage = model.StageResult("benchmark", "passed",
                                  max_points=sum(p.points for p in ex.performance))
        work = self.work / ex.name
        work.mkdir(parents=True, exist_ok=True)
        out = work / "benchmark.json"
        out.unlink(missing_ok=True)
        result = proc.run([str(binary), "--json", str(out)], ex.benchmark_timeout_s,
                          env=self._env(ex), output_limit=self.options.output_limit)
        stage.duration_s = round(result.duration_s, 2)
        stage.output = _clip(result.output, 4096)
        data = None
        if out.is_file():
            try:
                data = json.loads(out.read_text(encoding="utf-8", errors="replace"))
            except json.JSONDecodeError:
                data = None
        if result.returncode == 77:
            stage.status = "skipped"
            stage.message = "no GPU available to benchmark"
            return stage
        if not isinstance(data, dict) or data.get("completed") is not True:
            stage.status = "timed_out" if result.timed_out else "crashed"
            stage.message = f"the benchmark {result.describe_exit()} without finishing its report"
            return self._score_metrics(ex, stage, {}, stage.message)
        measurements = {m.get("name"): m for m in data.get("measurements", [])
                        if isinstance(m, dict)}
        stage.details["measurements"] = data.get("measurements", [])
        failed_requirements = [r for r in data.get("requirements", [])
                               if isinstance(r, dict) and not r.get("ok")]
        problem = ""
        if failed_requirements:
            problem = "; ".join(f"{r.get('name')}: {r.get('message', '')}"
                                for r in failed_requirements)
        elif data.get("errors"):
            problem = "; ".join(map(str, data["errors"]))
        return self._score_metrics(ex, stage, measurements, problem)

    def _score_metrics(self, ex: Exercise, stage: model.StageResult, measurements: dict,
                       problem: str) -> model.StageResult:
        for perf in ex.performance:
            m = measurements.get(perf.measure)
            b = measurements.get(perf.baseline)
            metric = model.Metric(perf.name, perf.description, perf.measure, perf.baseline,
                                  None, None, "", None, perf.full_at, perf.zero_at, 0.0,
                                  perf.points)
            if problem:
                metric.message = problem
            elif m is None or b is None:
                missing = perf.measure if m is None else perf.baseline
                metric.message = f"the benchmark did not report {missing!r}"
            elif not m.get("valid", False):
                metric.message = f"{perf.measure}: {m.get('problem', 'invalid')}"
            elif not b.get("valid", False) or not b.get("rate"):
                metric.message = f"baseline {perf.baseline}: {b.get('problem', 'no rate')}"
            else:
                metric.value = float(m.get("rate", 0.0))
                metric.baseline_value = float(b["rate"])
                metric.unit = str(m.get("unit", ""))
                metric.ratio = metric.value / metric.baseline_value
                metric.points = round(scoring.performance_points(
                    metric.ratio, perf.zero_at, perf.full_at, perf.points), 3)
                if metric.points < perf.points:
                    metric.message = (f"{metric.ratio:.2f}x {perf.baseline}; full marks at "
                                      f"{perf.full_at:.2f}x, none at {perf.zero_at:.2f}x")
                    if perf.hint:
                        metric.message += f". Try: {perf.hint}"
                else:
                    metric.message = f"{metric.ratio:.2f}x {perf.baseline} (full marks at " \
                                     f"{perf.full_at:.2f}x)"
            stage.metrics.append(metric)
        stage.points = round(sum(m.points for m in stage.metrics), 3)
        if stage.status == "passed" and stage.points < stage.max_points:
            stage.status = "failed"
        stage.message = "; ".join(f"{m.name}: {m.message}" for m in stage.metrics)
        return stage

    # ------------------------------------------------------------ one exercise
    def _missing_files(self, ex: Exercise) -> list[str]:
        folder = self.options.submission / ex.chapter
        return [f for f in ex.files if not (folder / f).is_file()]

    def grade_exercise(self, ex: Exercise) -> model.ExerciseResult:
        result = model.ExerciseResult(ex.key, ex.name, ex.chapter, ex.title,
                                      model.ExerciseStatus.PASSED, 0.0, ex.max_points)
        missing = self._missing_files(ex)
        if missing:
            result.status = model.ExerciseStatus.NOT_SUBMITTED
            result.message = (f"not submitted: {', '.join(missing)} not found in "
                              f"{self.options.submission / ex.chapter}")
            return result

        build = self.build_exercise(ex)
        result.stages.append(build)
        if build.status != "passed":
            result.status = model.ExerciseStatus.COMPILE_ERROR
            result.message = build.message.rstrip(":")
            return result
        if self.options.build_only:
            result.status = model.ExerciseStatus.SKIPPED
            result.message = "compiled (--build-only: not run)"
            return result
        if self.gpu is not None and ex.min_cc > 7.0:
            try:
                cc = float(self.gpu.compute_capability)
            except ValueError:
                cc = 0.0
            if cc < ex.min_cc:
                result.status = model.ExerciseStatus.SKIPPED
                result.message = (f"needs compute capability {ex.min_cc}, this GPU has "
                                  f"{self.gpu.compute_capability}")
                return result

        binary_dir = self.options.build_dir
        tests, _ = self.run_tests(ex, binary_dir / f"{ex.name}_test")
        tests.max_points = ex.correctness_points
        tests.points = round(scoring.correctness_points(
            tests.details.get("passed", 0), tests.details.get("total", 0),
            ex.correctness_points), 3)
        result.stages.append(tests)
        if tests.status == "skipped":
            result.status = model.ExerciseStatus.SKIPPED
            result.message = tests.message
            return result

        if self.options.sanitizer and tests.status != "timed_out":
            sanitizer = self.run_sanitizer(ex, binary_dir / f"{ex.name}_test")
            result.stages.append(sanitizer)
            if sanitizer.status == "failed":
                if tests.points > 0:
                    tests.message += (f"; {tests.points:g} points voided by the "
                                      "sanitizer's findings")
                tests.points = 0.0

        correct = tests.status == "passed" and all(
            s.status in ("passed", "skipped", "error") for s in result.stages
            if s.name == "sanitizer")
        if ex.performance:
            if correct and self.options.benchmark:
                result.stages.append(self.run_benchmark(ex, binary_dir / f"{ex.name}_bench"))
            else:
                why = ("not run (--no-benchmark)" if not self.options.benchmark else
                       "not run: the exercise must pass its tests and the sanitizer first")
                result.stages.append(model.StageResult(
                    "benchmark", "skipped", max_points=sum(p.points for p in ex.performance),
                    message=why))

        result.score = round(sum(s.points for s in result.stages), 3)
        if tests.status in ("crashed", "timed_out", "exited_early"):
            result.status = model.ExerciseStatus(tests.status)
            result.message = tests.message
        elif not correct:
            result.status = model.ExerciseStatus.FAILED
            failing = next(s for s in result.stages if s.name in ("tests", "sanitizer")
                           and s.status not in ("passed", "skipped", "error"))
            result.message = f"{failing.name}: {failing.message}"
        elif result.score + 1e-9 < result.max_score:
            result.status = model.ExerciseStatus.PARTIAL
            bench = result.stage("benchmark")
            result.message = bench.message if bench else ""
        else:
            result.status = model.ExerciseStatus.PASSED
            result.message = "full marks"
        return result

    # ------------------------------------------------------------ everything
    def run(self) -> model.Report:
        report = model.Report(
            submission=str(self.options.submission), seed=self.options.seed,
            started_at=_now(), grader_version=__version__, gpu=self.gpu,
            host=platform.node(),
            options={"build_only": self.options.build_only,
                     "sanitizer": self.options.sanitizer,
                     "benchmark": self.options.benchmark,
                     "cuda_arch": self.options.cuda_arch})
        self.options.build_dir.mkdir(parents=True, exist_ok=True)
        if self.work.exists():
            shutil.rmtree(self.work, ignore_errors=True)
        self.configure()
        submitted = [ex for ex in self.exercises if not self._missing_files(ex)]
        self.build_everything([t for ex in submitted
                               for t in (f"{ex.name}_test", f"{ex.name}_bench")])
        for i, ex in enumerate(self.exercises, 1):
            self.progress(f"[{i}/{len(self.exercises)}] {ex.key}: grading")
            outcome = self.grade_exercise(ex)
            report.exercises.append(outcome)
            self.progress(f"[{i}/{len(self.exercises)}] {ex.key}: {outcome.status}, "
                          f"{outcome.score:g}/{outcome.max_score:g}")
        report.finished_at = _now()
        return report


_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+error")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY:.*?\((\d+)\s+error")


def _disabled(case: str) -> bool:
    return any(part.startswith("DISABLED_") for part in re.split(r"[./]", case))


def _sanitizer_error_count(output: str) -> int:
    counts = [int(m.group(1)) for m in _ERROR_SUMMARY.finditer(output)]
    counts += [int(m.group(1)) for m in _RACE_SUMMARY.finditer(output)]
    return max(counts, default=0)


def _sanitizer_findings(output: str) -> str:
    """The sanitizer's own lines (prefixed =========), which say what and where."""
    lines = [l for l in output.splitlines() if l.startswith("=========")]
    return "\n".join(lines[:80]) if lines else output
