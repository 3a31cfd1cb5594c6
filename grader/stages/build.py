"""The build stage: one meson setup per submission, parallel ninja builds over every exercise
(in waves when checks wait for them), then ninja per exercise to attribute failures (a compile
error costs only its exercise)."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import time
from functools import cache
from pathlib import Path
from typing import Callable

from grader import proc, sandbox, tools
from grader.stages import sources
from grader.errors import GraderError
from grader.manifest import COURSE_CEILINGS_PROGRAM, Exercise, ceilings_program, ceilings_source
from grader.model import StageName, StageResult, StageStatus
from grader.stages.common import GradeOptions, clip, host_cores
from grader.stages.integrity import COURSE_LIBRARIES

CONFIGURE_TIMEOUT_S = 600
BUILD_ALL_TIMEOUT_S = 3600
BUILD_ONE_TIMEOUT_S = 900


def compiler_env(options: GradeOptions, split_threads: int = 1) -> dict:
    """The environment ninja compiles in. ccache hashes the working directory into nvcc's
    results (it counts -lineinfo as debug information), so the same course file built for two
    submissions missed every time; Meson's paths are relative to the build directory and
    identical at the same depth, so the directory adds nothing to the key. BASEDIR makes
    absolute paths inside the course (a submission given by absolute path) relative."""
    env = dict(os.environ)
    env.setdefault("CCACHE_NOHASHDIR", "1")
    env.setdefault("CCACHE_BASEDIR", str(options.root))
    # Meson looks for nvcc and ninja on PATH: add set-up's places after the user's own.
    path = env.get("PATH", "").split(os.pathsep)
    extra = [str(d) for d in tools.search_dirs() if d.is_dir() and str(d) not in path]
    env["PATH"] = os.pathsep.join([p for p in path if p] + extra)
    if split_threads > 1 and nvcc_splits(env["PATH"]):
        # nvcc reads NVCC_APPEND_FLAGS on every call (the build files stay as configured).
        env["NVCC_APPEND_FLAGS"] = " ".join(
            filter(None, [env.get("NVCC_APPEND_FLAGS", ""), f"--split-compile={split_threads}"]))
    return env


def split_compile_threads(exercises: int, cores: int | None = None) -> int:
    """Threads for each nvcc's optimizer (nvcc --split-compile): the cores a build of this
    many exercises leaves idle. A student's re-grade compiles one file, the longest step of
    its wait, on one core otherwise; a course-wide build keeps every core busy with files
    (1: no splitting)."""
    cores = host_cores() if cores is None else cores
    return max(1, cores // max(1, exercises))


@cache
def nvcc_splits(path: str) -> bool:
    """Whether the nvcc on `path` knows --split-compile (CUDA 12.0 may not): an unknown
    option would fail every compile."""
    nvcc = shutil.which("nvcc", path=path)
    if nvcc is None:
        return False
    probe = proc.run([nvcc, "--split-compile=2", "--dryrun", "-x", "cu", "-c", os.devnull,
                      "-o", os.devnull], 60, output_limit=16 * 1024)
    return probe.returncode == 0


def targets(ex: Exercise) -> list[str]:
    return [f"{ex.name}_test", f"{ex.name}_bench"]


def build_launcher(options: GradeOptions) -> None:
    """Builds the sandbox's launcher (course code, seconds) before any exercise, so the first
    student program can run in it; a failure here is found by the sandbox's probe."""
    ninja = tools.find("ninja", "to build")
    proc.run([ninja, "-C", str(options.build_dir), sandbox.LAUNCHER], BUILD_ONE_TIMEOUT_S,
             env=compiler_env(options), output_limit=64 * 1024)


def ceilings_targets(exercises: list[Exercise]) -> list[str]:
    """The course-only programs that measure the exercises' shared ceilings
    (grader/stages/ceilings.py): the copies', and each shared folder's that has one."""
    out = [COURSE_CEILINGS_PROGRAM] if exercises else []
    for ex in exercises:
        if ceilings_source(ex) is not None and ceilings_program(ex) not in out:
            out.append(ceilings_program(ex))
    return out


# What the last successful configure of a build directory saw (configure_key).
CONFIGURE_STAMP = "grader-configure.json"


def configure_key(options: GradeOptions, settings: list[str]) -> str:
    """A digest of everything a configure depends on: the settings, the course's Meson files,
    manifests and build plan, and which files the submission has (an exercise whose file is
    missing is left out of the build). Contents of the student's files are not in it: ninja
    rebuilds what changed by itself."""
    # The machine too: gpu_arch=auto is resolved for the GPU at hand when Meson configures.
    digest = hashlib.sha256(json.dumps([settings, shutil.which("nvcc"), platform.node(),
                                        os.environ.get("CUDA_VISIBLE_DEVICES")]).encode())
    root = options.root
    course = [root / "meson.build", root / "meson.options", root / "grader" / "meson_plan.py",
              root / "grader" / "manifest.py", *sorted((root / "chapters").rglob("*.toml")),
              *sorted((root / "chapters").rglob("meson.build"))]
    for path in course:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes() if path.is_file() else b"(none)")
    # Which course sources there are: the build plan globs them (a course update that adds a
    # shared folder's source must reach the build, or its library lacks the new functions).
    sources = sorted(os.fsencode(p.relative_to(root)) for p in (root / "chapters").rglob("*")
                     if p.is_file() and p.suffix in (".cu", ".cpp", ".h", ".cuh"))
    digest.update(b"\n".join(sources))
    submitted = sorted(str(p.relative_to(options.submission))
                       for p in options.submission.glob("ch*/**/*") if p.is_file())
    # File names are bytes to the system and may not be UTF-8 (a file copied from another
    # machine): os.fsencode gives back those bytes, where str.encode() would raise.
    digest.update(b"\n".join(os.fsencode(name) for name in submitted))
    return digest.hexdigest()


def configure(options: GradeOptions, progress: Callable[[str], None]) -> None:
    """meson setup (or --reconfigure); GraderError when it fails, since nothing can build.
    Skipped when the build directory was configured for exactly this (configure_key): a
    student grading one changed exercise again waits for that exercise only."""
    meson = tools.find("meson", "to configure the build")
    build = options.build_dir
    settings = [str(build), str(options.root), f"-Dsubmission={options.submission}",
                f"-Dgpu_arch={options.cuda_arch}",
                # Always said, so a build directory once configured with hidden tests drops them.
                f"-Dhidden_tests={'true' if options.hidden else 'false'}"]
    existing = (build / "build.ninja").is_file()
    stamp = build / CONFIGURE_STAMP
    key = configure_key(options, settings)
    if existing and stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == key:
        progress(f"{build} is configured for this submission already")
        return
    stamp.unlink(missing_ok=True)
    progress(f"configuring {build}")
    result = proc.run([meson, "setup", *(["--reconfigure"] if existing else []), *settings],
                      CONFIGURE_TIMEOUT_S, env=compiler_env(options), output_limit=256 * 1024)
    if result.returncode != 0 and existing and "Unknown option" in result.output:
        # A build directory made before the course gained an option (a course update):
        # --reconfigure refuses the new -D, so set it up again from scratch.
        result = proc.run([meson, "setup", "--wipe", *settings], CONFIGURE_TIMEOUT_S,
                          env=compiler_env(options), output_limit=256 * 1024)
    if result.returncode != 0:
        problem = next((l for l in result.output.splitlines()
                        if "ERROR:" in l), result.describe_exit())
        raise GraderError(f"configuring the build failed: {problem.strip()} "
                          f"(full log: {build}/meson-logs/meson-log.txt)")
    stamp.write_text(key + "\n", encoding="utf-8")


def waves(exercises: list[Exercise], first: int) -> list[list[Exercise]]:
    """The exercises in the order given, cut into builds of `first`, then twice as many, and so
    on; a last cut smaller than the one before joins it. Ninja runs a link only once nothing
    on a longer path waits, so one build of everything links every program at its end and
    the checks wait for the whole build; built a few at a time, the first exercises' checks
    start after their own compiles while the rest builds (docs/architecture/build.md)."""
    out: list[list[Exercise]] = []
    rest, size = list(exercises), max(1, first)
    while rest:
        out.append(rest[:size])
        rest, size = rest[size:], size * 2
        if rest and len(rest) < size // 2:
            out[-1] += rest
            rest = []
    return out


def build_all(options: GradeOptions, exercises: list[Exercise],
              progress: Callable[[str], None],
              on_built: Callable[[Exercise, str], None] | None = None,
              first_wave: int = 0) -> str:
    """Parallel builds of all targets, failures and all (-k 0); per-exercise results come
    from run() afterwards, which then finds little or nothing to do. Returns ninja's output
    (head and tail of each build), where the compilers' warnings are. on_built(exercise,
    output so far) is called, from this thread, as soon as an exercise's programs have linked
    (ninja lists a step when it ends), so that its checks can start while the rest builds.
    With first_wave, the exercises build in waves (waves()) in the order given, the course
    libraries the integrity stage reads in the first; else in one build."""
    if not exercises:
        return ""
    ninja = tools.find("ninja", "to build")
    args = [ninja, "-C", str(options.build_dir), "-k", "0"]
    if options.jobs:
        args += ["-j", str(options.jobs)]
    progress(f"building {len(exercises)} exercises")
    watch = BuildProgress(exercises, progress, on_built)
    cuts = waves(exercises, first_wave) if first_wave else [list(exercises)]
    deadline = time.monotonic() + BUILD_ALL_TIMEOUT_S
    outputs = []
    for k, wave in enumerate(cuts):
        wanted = [t for ex in wave for t in targets(ex)]
        if k == 0 and len(cuts) > 1:
            wanted = list(COURSE_LIBRARIES) + wanted
        if k == len(cuts) - 1:
            wanted += ceilings_targets(exercises)
        split = split_compile_threads(len(wave), options.jobs or None)
        result = proc.run(args + wanted, max(1.0, deadline - time.monotonic()),
                          env=compiler_env(options, split), output_limit=256 * 1024,
                          on_line=watch)
        outputs.append(result.output)
        if result.timed_out or result.returncode not in (0, 1):
            break  # what did not link builds again alone, which names what happened
        watch.release_linked()  # ended by itself, output whole
    return "\n".join(outputs)


class BuildProgress:
    """Turns ninja's "[k/N] Linking target <exercise>_test" lines into one line per exercise
    built ("built vector_add (3 of 33, 41 s)"), and a step count now and then while the
    shared code compiles and nothing links yet; tells on_built, with the output so far (for
    the exercise's compiler warnings), when an exercise's programs are all linked."""

    STEP_EVERY_S = 15.0
    KEEP_CHARS = 4 * 1024 * 1024  # of output for on_built; warnings past it go unreported

    def __init__(self, exercises: list[Exercise], progress: Callable[[str], None],
                 on_built: Callable[[Exercise, str], None] | None = None):
        self.progress = progress
        self.on_built = on_built
        self.total = len(exercises)
        self.exercises = {ex.name: ex for ex in exercises}
        self.waiting = {ex.name: set(targets(ex)) for ex in exercises}
        self.done = 0
        self.started = time.monotonic()
        self.last_report = self.started
        self.lines: list[str] = []
        self.kept = 0
        # Ninja prints a step's line when the step ends, and "FAILED: <outputs>" right after
        # it when it failed; so an exercise whose last program just linked is held here until
        # the next line shows whether that link failed.
        self.linked: list[str] = []
        self.owner_of_last_step = ""  # the exercise whose program the last step linked
        self.failed: set[str] = set()

    def __call__(self, line: str) -> None:
        if self.on_built is not None and self.kept < self.KEEP_CHARS:
            self.lines.append(line)
            self.kept += len(line)
        if line.startswith("FAILED:"):
            if self.owner_of_last_step:
                self.failed.add(self.owner_of_last_step)  # left to run(), which names the error
            self.linked = []
        elif self.linked:
            self.release_linked()
        step = _STEP.match(line)
        if not step:
            return
        now = time.monotonic()
        target = step.group(3).rsplit(" ", 1)[-1] if "Linking target" in line else ""
        self.owner_of_last_step = ""
        for name, left in self.waiting.items():
            if target in left:
                self.owner_of_last_step = name
                left.discard(target)
                if not left:
                    self.done += 1
                    self.last_report = now
                    self.progress(f"built {name} ({self.done} of {self.total}, "
                                  f"{now - self.started:.0f} s)")
                    if self.on_built is not None and name not in self.failed:
                        self.linked.append(name)
                return
        if now - self.last_report >= self.STEP_EVERY_S:
            self.last_report = now
            self.progress(f"building: step {step.group(1)} of {step.group(2)} "
                          f"({now - self.started:.0f} s)")

    def release_linked(self) -> None:
        """Hands the exercises held after their last link to on_built: the next line came (or
        ninja ended without one), and it was not a failure."""
        self.linked, ready = [], self.linked
        for name in ready:
            self.on_built(self.exercises[name], "\n".join(self.lines))


_STEP = re.compile(r"^\[(\d+)/(\d+)\] (.*)$")


def run(options: GradeOptions, ex: Exercise, build_log: str = "") -> StageResult:
    """Builds one exercise's test and benchmark binaries. `build_log` is build_all's output:
    a file that compiled there prints nothing here, so its warnings are looked up in it."""
    ninja = tools.find("ninja", "to build")
    result = proc.run([ninja, "-C", str(options.build_dir), *targets(ex)], BUILD_ONE_TIMEOUT_S,
                      env=compiler_env(options), output_limit=options.output_limit)
    if result.returncode == 0:
        return linked(ex, build_log + "\n" + result.output, result.duration_s, options)
    stage = StageResult(StageName.BUILD,
                        StageStatus.TIMED_OUT if result.timed_out else StageStatus.FAILED,
                        duration_s=round(result.duration_s, 2))
    stage.message = ("the build timed out" if result.timed_out else
                     "compilation failed; the compiler said:")
    stage.output, commands = compiler_errors(filter_outside(options, ex, result.output))
    stage.output = openable_paths(stage.output, options.build_dir, options.root)
    if commands:
        stage.details.commands = commands
    return stage


def filter_outside(options: GradeOptions, ex: Exercise, output: str) -> str:
    """The compilers' output without the diagnostics located in files outside the student's
    chapter folder, the course's include folders and the system's: their quoted lines could
    show a file the sources check did not see coming (grader/stages/sources.py)."""
    roots = [options.submission / ex.chapter, options.root / "support" / "include",
             ex.directory] + ([ex.shared_directory] if ex.shared else [])
    return sources.filter_compiler_output(output, roots, base=options.build_dir)


WARNINGS_SHOWN = 20  # of an exercise's warnings; the message counts them all


def linked(ex: Exercise, log: str, duration_s: float = 0.0,
           options: GradeOptions | None = None) -> StageResult:
    """The build stage of an exercise whose programs built, with the warnings in its own
    files that `log` (the compilers' output) holds: the first WARNINGS_SHOWN, and how many
    there are in all. Paths in them open from the course's root (openable_paths): the build
    folder is `options`', or the one ninja said it entered."""
    stage = StageResult(StageName.BUILD, StageStatus.PASSED, duration_s=round(duration_s, 2))
    build_dir = options.build_dir if options else _entered(log)
    warnings = student_warnings(ex, log, limit=None)
    earlier = False
    if build_dir is not None:
        warnings, earlier = _remembered_warnings(ex, log, warnings, build_dir)
    if warnings:
        shown = warnings[:WARNINGS_SHOWN]
        if build_dir is not None:
            shown = [openable_paths(w, build_dir, options.root if options else COURSE_ROOT)
                     for w in shown]
        stage.details.warnings = shown
        stage.message = (f"compiled, with {len(warnings)} compiler warning"
                         f"{'s' if len(warnings) != 1 else ''} in your code")
        if earlier:
            stage.message += " (from its last compile: unchanged since)"
        if len(warnings) > len(shown):
            stage.details.warnings_hidden = len(warnings) - len(shown)
            stage.message += (f"; {len(shown)} shown here, {len(warnings) - len(shown)} "
                              "more not shown")
    return stage


# The warnings of each exercise's last compile, kept in its build folder: ninja compiles only
# what changed, so a grade after one that printed warnings would otherwise show none.
WARNINGS_FOLDER = "grader-warnings"


def _remembered_warnings(ex: Exercise, log: str, found: list[str],
                         build_dir: Path) -> tuple[list[str], bool]:
    """This build's warnings where it compiled the student's files (and keeps them for the next
    grade), else those of the compile before: (warnings, whether they are the earlier ones)."""
    record = Path(build_dir) / WARNINGS_FOLDER / f"{ex.name}.json"
    # Meson names an object after its source's path, "/" made "_": ..._vector_add.cu.o.
    objects = tuple(f"{ex.chapter}_{name}.o" for name in ex.files)
    compiled = any(line.startswith("[") and "Compiling" in line
                   and line.rstrip().endswith(objects) for line in log.splitlines())
    if compiled or found:
        try:
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text(json.dumps(found), encoding="utf-8")
        except OSError:
            pass  # only a later grade's reminder is lost
        return found, False
    try:
        kept = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return found, False
    if not isinstance(kept, list) or not all(isinstance(w, str) for w in kept):
        return found, False
    return kept, bool(kept)


def student_warnings(ex: Exercise, log: str, limit: int | None = WARNINGS_SHOWN) -> list[str]:
    """The compilers' warning lines about the student's own files (nvcc's "file(12): warning
    #177-D: ..." and the host compiler's "file:12:5: warning: ..."), each once; the first
    `limit` of them (None: all)."""
    mine = tuple(f"{ex.chapter}/{name}" for name in ex.files)
    found: list[str] = []
    seen: set[str] = set()
    for line in log.splitlines():
        where = line.split(": warning", 1)[0] if ": warning" in line else ""
        where = where.split("(", 1)[0].split(":", 1)[0]
        if where.endswith(mine) and line not in seen:
            seen.add(line)
            found.append(line)
    return found if limit is None else found[:limit]


# The course's root, for a build stage made from ninja's output alone (linked without options).
COURSE_ROOT = Path(__file__).resolve().parent.parent.parent
# ninja -C DIR says first "ninja: Entering directory `DIR'".
_ENTERING = re.compile(r"^ninja: Entering directory [`'\"](.*)['\"]$", re.MULTILINE)
# A path relative to the build folder, as Meson hands sources to the compilers
# ("../../workspace/ch01_programming_model/vector_add.cu(12): error"): one or more "../" not
# preceded by a path or option character (so "-I../../support" in a command stays as it is).
_RELATIVE = re.compile(r"(?<![\w./-])((?:\.\./)+[^\s:(),'\"`]+)")


def _entered(log: str) -> Path | None:
    found = _ENTERING.search(log)
    return Path(found.group(1)) if found else None


def openable_paths(text: str, build_dir: Path, root: Path) -> str:
    """The compilers' messages with each path relative to the build folder (where ninja runs
    them) rewritten to open from the course's root, where `python3 -m grader` and
    scripts/grade.sh run: ../../workspace/ch01_programming_model/vector_add.cu becomes
    workspace/ch01_programming_model/vector_add.cu. Meson names a file outside the course (a
    submission elsewhere) by its absolute path already, so only paths into the course are
    relative; any other is left as it is."""
    base, top = os.path.abspath(build_dir), os.path.abspath(root)

    def openable(found: re.Match) -> str:
        full = os.path.normpath(os.path.join(base, found.group(1)))
        if os.path.commonpath([full, top]) != top:
            return found.group(1)
        return os.path.relpath(full, top)

    return _RELATIVE.sub(openable, text)


def compiler_errors(output: str) -> tuple[str, list[str]]:
    """The part of ninja's output worth showing, from the first FAILED: line on, without the
    compiler command lines (hundreds of characters of flags before the first message): those
    come back separately, for -v."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("FAILED:"):
            keep, commands = [], []
            after_failed = False
            for l in lines[i:]:
                if l.startswith("ninja: build stopped"):
                    continue
                # ninja prints the failed command right after FAILED:
                if after_failed and (" -o " in l or " -c " in l):
                    commands.append(l)
                else:
                    keep.append(l)
                after_failed = l.startswith("FAILED:")
            return clip("\n".join(keep)), commands
    return clip(output), []
