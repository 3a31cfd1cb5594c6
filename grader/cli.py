"""Command line: python3 -m grader {init,grade,list,skeletons,render,batch,calibrate,
export-template,export-gradescope,export-prairielearn,gradescope-run,prairielearn-run,
classroom-run,classroom-points,serve,serve-token};
slurm-task, slurm-cleanup and slurm-merge are run by Slurm for `batch --slurm`."""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader import (__version__, exports, manifest, model, render, skeletons, template, tools,
                    workspace)
from grader import batch, hidden, sandbox, slurm  # instructors: batch grading, hidden test cases
from grader import html_report
from grader import calibration  # thresholds checked on this GPU model
from grader.service import commands as service  # serve, serve-token (Flask loaded by serve only)
from grader.errors import EXIT_INCOMPLETE, GraderError
from grader.model import ExerciseStatus
from grader.pipeline import GradeOptions, Grader
from grader.stages.common import SECRET_ENV

ROOT = Path(__file__).resolve().parent.parent
EXIT_OK, EXIT_BELOW_THRESHOLD, EXIT_GRADER_ERROR = 0, 1, 2
# `grade --build-only` exits 1 when an exercise did not compile or its code was rejected:
# such a run has no score, so this is the one failure it can report.
EXIT_NOT_COMPILED = 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m grader",
                                description="Build, test, sanitize and benchmark CUDA course "
                                "exercises.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser("init", help="copy the skeletons into workspace/ (your copy; files "
                   "already there are never replaced)",
                   description="Copies every skeleton file that workspace/ lacks from "
                   "skeletons/ into workspace/, where you edit them. A file already in "
                   "workspace/ is never replaced, whatever it holds, so running it again after a "
                   "course update adds the new exercises and leaves your work as it is. The "
                   "first 'grade' without a submission does the same.")

    g = sub.add_parser("grade", help="grade a submission directory")
    g.add_argument("submission", nargs="?", default=None,
                   help="directory with one folder per chapter (default: workspace/, your "
                   "work, created from the skeletons if missing); solutions/, skeletons/ or "
                   "any other directory works too")
    g.add_argument("-e", "--exercise", action="append", default=[], metavar="NAME",
                   help="grade only this exercise or chapter (ch01, ch01_programming_model, "
                   "vector_add, ch01/vector_add); repeatable")
    g.add_argument("--json", type=Path, metavar="PATH",
                   help="write the JSON report here (default: <build dir>/report.json)")
    g.add_argument("--junit", type=Path, metavar="PATH", help="also write JUnit XML here")
    g.add_argument("--seed", type=str, help="seed for the random inputs (default: a new one, "
                   "printed and recorded in the report)")
    g.add_argument("--fail-under", type=float, metavar="PERCENT",
                   help="exit 1 when the total score is below this percentage, 0 to 100 (for "
                   "CI; not with --build-only, which has no score)")
    g.add_argument("--build-dir", type=Path, help="build directory (default: "
                   "build/grade/<submission name>-<hash>)")
    g.add_argument("--build-only", action="store_true",
                   help="only compile: needs no GPU; nothing runs, so there is no score; exit "
                   "status 1 when an exercise does not compile or its code is rejected")
    g.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer")
    g.add_argument("--no-benchmark", action="store_true", help="skip benchmarks")
    g.add_argument("--profile", action="store_true",
                   help="profile the timed kernels with Nsight Compute after the benchmark; "
                   "adds time")
    g.add_argument("--cuda-arch", default="auto", help="compute capability to build for "
                   "(default: the GPU's, or 9.0 without one)")
    g.add_argument("-j", "--jobs", type=_positive("--jobs"), help="parallel compile jobs")
    _add_parallel_flag(g)
    _add_sharing_flag(g)
    sandboxing = g.add_mutually_exclusive_group()
    sandboxing.add_argument("--no-sandbox", action="store_true",
                            help="run the student's programs with the grader's own rights "
                            "(default: in the course's sandbox where this machine allows one; "
                            "the report says when it does not)")
    sandboxing.add_argument("--require-sandbox", action="store_true",
                            help="stop (exit 2) when this machine cannot give the sandbox")
    g.add_argument("-q", "--quiet", action="store_true",
                   help="no progress lines (default: each step at a terminal; when stderr is a "
                   f"file or a pipe, the current step every {Progress.EVERY_S:g} s)")
    g.add_argument("-v", "--verbose", action="store_true", help="details for every exercise")
    _add_instructor_flags(g)

    ls = sub.add_parser("list", help="list the exercises")
    ls.add_argument("--json", action="store_true", help="machine-readable list")

    sk = sub.add_parser("skeletons", help="regenerate skeletons/ from solutions/ (for course "
                        "authors; never touches workspace/)")
    sk.add_argument("--check", action="store_true",
                    help="only check that skeletons/ is up to date (exit 1 if not)")
    sk.add_argument("--force", action="store_true",
                    help="also replace skeletons that were edited by hand since generated")

    r = sub.add_parser("render", help="print or convert a saved JSON report",
                       description="Prints a JSON report written by 'grade' (or 'batch') as "
                       "'grade' did, and writes it in other formats: JUnit XML, an HTML page, "
                       "Gradescope or PrairieLearn results. Nothing is graded again.")
    r.add_argument("report", type=Path, help="the JSON report, e.g. "
                   "build/grade/<submission>-<hash>/report.json")
    r.add_argument("--junit", type=Path, metavar="PATH", help="write JUnit XML here")
    _add_export_arguments(sub, g, r)
    _add_html_flags(g, r)
    _add_batch_parser(sub)
    _add_slurm_parsers(sub)
    _add_calibrate_parser(sub)
    service.add_parsers(sub)
    return p


def _add_no_sandbox_flag(p: argparse.ArgumentParser) -> None:
    """For the graders of a class (batch, Slurm, Gradescope), where the sandbox is required."""
    p.add_argument("--no-sandbox", action="store_true",
                   help="grade even where this machine cannot give the course's sandbox, the "
                   "students' programs then running with the grader's own rights (default: "
                   "such a machine is refused, exit 2)")


def _sandbox_mode(args, default: sandbox.Mode) -> sandbox.Mode:
    if getattr(args, "no_sandbox", False):
        return sandbox.Mode.OFF
    if getattr(args, "require_sandbox", False):
        return sandbox.Mode.REQUIRED
    return default


def _add_parallel_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--parallel", type=_positive("--parallel"), metavar="N",
                   help="exercises whose tests and sanitizer runs go at once (1: one at a time; "
                   "default: one per two cores and per 10 GiB of GPU memory, at most 8); "
                   "benchmarks always run alone")


def _add_sharing_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-shared-gpu", action="store_true",
                   help="score measurements taken while another process used the GPU, and "
                   "mark them in the report (default: such a measurement is taken again, and "
                   "reported as not measured if the GPU stays busy: the grade is incomplete, "
                   "exit status 3)")


def _seed(text: str | None) -> int:
    if text is None:
        return secrets.randbits(32)
    try:
        value = int(text, 0)
    except ValueError:
        raise GraderError(f"--seed {text!r} is not a whole number") from None
    if not 0 <= value < 2**64:
        raise GraderError(f"--seed {text!r} must be between 0 and 2^64-1")
    return value


def _positive(flag: str):
    """An argparse type: a whole number above 0, else the grader's one-line error naming
    `flag` (exit 2); not a number at all: argparse's own "invalid int value"."""
    def parse(text: str) -> int:
        if (value := int(text)) < 1:
            raise GraderError(f"{flag} takes a positive number")
        return value
    parse.__name__ = "int"
    return parse


NO_GPU = ("no NVIDIA GPU found (nvidia-smi lists none); grading runs the tests on a GPU. Use "
          "--build-only to check that everything compiles.")


def _gpu(needed: bool, missing: str = NO_GPU) -> model.GpuInfo | None:
    """This machine's GPU (None without one); GraderError `missing` when the command needs
    one and there is none."""
    gpu = tools.query_gpu()
    if gpu is None and needed:
        raise GraderError(missing)
    return gpu


def _grade_options(args, submission: Path, build_dir: Path, sandbox_default: sandbox.Mode,
                   check_sandbox: bool = True) -> GradeOptions:
    """The options of `grade`, or the template of a batch's students; unless --build-only
    (nothing runs) or not `check_sandbox`, the kernel is checked for the sandbox they ask."""
    options = GradeOptions(root=ROOT, submission=submission, build_dir=build_dir,
                           seed=_seed(args.seed), build_only=args.build_only,
                           sanitizer=not args.no_sanitizer, benchmark=not args.no_benchmark,
                           profile=getattr(args, "profile", False),
                           jobs=args.jobs, cuda_arch=args.cuda_arch, parallel=args.parallel,
                           allow_shared_gpu=args.allow_shared_gpu,
                           sandbox_mode=_sandbox_mode(args, sandbox_default),
                           **_instructor_options(args))
    if check_sandbox and not options.build_only:
        sandbox.check_kernel(options.sandbox_mode)
    return options


def _default_build_dir(submission: Path) -> Path:
    import hashlib
    digest = hashlib.sha1(str(submission).encode()).hexdigest()[:8]
    return ROOT / "build" / "grade" / f"{submission.name}-{digest}"


# ------------------------------------------------------------------ where the grader writes
# No option replaces a source file or a folder the grader did not make. A destination is
# refused, before any work, when it has a source file's extension, lies in the course's
# sources, in the student's chapter folders or in the submission being graded, or is an
# existing file of another kind than the option writes (a report is replaced only by a report).

SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c", ".py", ".toml", ".md")
COURSE_SOURCES = ("chapters", "solutions", "skeletons", "support", "grader", "tests", "scripts",
                  "docs", ".ci", ".github", ".git")
# What each option writes: a name for messages, and how such a file starts (after blanks).
_KINDS = {"json": ("a JSON report", ("{",)), "xml": ("a JUnit XML file", ("<?xml", "<testsuite")),
          "html": ("an HTML page", ("<!doctype html", "<html")), "zip": ("a zip", ("pk",))}
_EXAMPLE = {"json": "report.json", "xml": "report.xml", "html": "report.html",
            "zip": "autograder.zip"}


def _protected(submission: Path | None) -> list[tuple[Path, str]]:
    """Folders no option writes into, each with how a message names it."""
    folders = [(ROOT / name, f"the course's {name}/") for name in COURSE_SOURCES]
    folders += [(chapter, f"your work in {workspace.WORKSPACE}/{chapter.name}/")
                for chapter in sorted(workspace.path(ROOT).glob("ch*")) if chapter.is_dir()]
    if submission is not None:
        folders.append((submission, f"the submission {submission}"))
    return folders


def _inside(path: Path, folder: Path) -> bool:
    folder = folder.resolve()
    return path == folder or folder in path.parents


def _refuse_protected(path: Path, flag: str, submission: Path | None) -> None:
    where = path.resolve()  # through links, as the write would go
    for folder, what in _protected(submission):
        if _inside(where, folder):
            raise GraderError(f"{flag} {path} is inside {what}: the grader writes nothing "
                              "there; give a path outside it")


def _looks_like(path: Path, kind: str) -> bool:
    """Whether the existing file `path` is of the kind the option writes (or empty)."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n").lower()
    if not text:
        return True
    if kind == "json":
        try:  # a whole object, as every JSON the grader writes is
            return isinstance(json.loads(path.read_text(encoding="utf-8")), dict)
        except (OSError, ValueError):
            return False
    if kind == "xml":
        return "<testsuite" in text
    return text.startswith(_KINDS[kind][1])


def _output_file(path: Path | None, flag: str, kind: str = "json",
                 submission: Path | None = None) -> Path | None:
    """Checks an output path before any work is done, so a long grade is not lost to a typo
    and nothing of the student's or the course's is replaced: not a folder, not a source
    file's name, not in the sources or the submission, not an existing file of another kind;
    its folder can be made and written."""
    if path is None:
        return None
    if path.is_dir():
        raise GraderError(f"{flag} {path} is a folder; give a file name, e.g. "
                          f"{path / _EXAMPLE[kind]}")
    if path.suffix.lower() in SOURCE_SUFFIXES:
        raise GraderError(f"{flag} {path} has a source file's extension ({path.suffix}): the "
                          f"grader never writes {_KINDS[kind][0]} under such a name; give "
                          f"another, e.g. {path.with_name(_EXAMPLE[kind])}")
    _refuse_protected(path, flag, submission)
    if (path.exists() or path.is_symlink()) and not _looks_like(path, kind):
        raise GraderError(f"{flag} {path} exists and is not {_KINDS[kind][0]}: the grader "
                          "replaces only a file of the kind it writes; give a new name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise GraderError(f"{flag} {path}: cannot make its folder ({error.strerror})") from None
    _writable(path.parent, f"{flag} {path}: its folder")
    return path


def _writable(folder: Path, what: str) -> None:
    """A real write, not os.access: it holds for root, read-only mounts and ACLs alike."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise GraderError(f"{what} {folder} cannot be written ({error.strerror})") from None


def _existing_parent(path: Path) -> Path:
    """The nearest folder above `path` that exists: where a new folder would be made."""
    return next(p for p in path.parents if p.is_dir())


def _build_folder(path: Path, submission: Path, flag: str = "--build-dir") -> Path:
    """The build folder, checked before any work: a folder (made if new) that can be written,
    outside the sources and the submission, and not holding them (the grader empties parts
    of it and Meson writes its own files there)."""
    if path.exists() and not path.is_dir():
        raise GraderError(f"{flag} {path} is a file, not a folder")
    _refuse_protected(path, flag, submission)
    for holds, what in ((ROOT, "the course"), (submission, "the submission")):
        if _inside(holds.resolve(), path):
            raise GraderError(f"{flag} {path} holds {what}; give a folder of its own, e.g. "
                              f"{ROOT / 'build' / 'grade' / 'mine'}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise GraderError(f"{flag} {path}: cannot make it ({error.strerror})") from None
    _writable(path, flag)
    return path


def _write(path: Path, text: str, flag: str) -> None:
    try:
        render.write_atomically(path, text)
    except OSError as error:
        raise GraderError(f"cannot write {flag} {path}: {error.strerror}") from None


def printable(text: str) -> str:
    """Text that any output takes: a file name that is not UTF-8 (os.fsdecode's lone
    surrogates) shown with \\x escapes instead of failing the print."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _say(message: str) -> None:
    print(printable(f"grader: {message}"), file=sys.stderr, flush=True)


class Progress:
    """Progress lines on stderr. At a terminal, each step as it comes. In a file or a pipe
    (CI, nohup, a batch's log) the step the grade is at, once every EVERY_S: a long build is
    never silent there, and a log is not flooded with one line per step; a grade shorter than
    EVERY_S prints none. None at all with -q."""

    EVERY_S = 30.0
    BEAT_S = 1.0  # how often the thread looks

    def __init__(self, quiet: bool, stream=None, clock=time.monotonic):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live = not quiet and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.clock = clock
        self.started = self.last = clock()
        try:  # the grading service's workers ask for the step more often (grader/service)
            self.every_s = float(os.environ["COURSE_PROGRESS_EVERY_S"])
        except (KeyError, ValueError):
            self.every_s = self.EVERY_S
        self.latest = ""
        self.printed = ""
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __call__(self, message: str) -> None:
        if self.live:
            self._print(message)
        elif not self.quiet:
            with self.lock:
                self.latest = message

    def tick(self) -> None:
        """Called every BEAT_S in a file or a pipe: the latest step, when EVERY_S passed."""
        if self.quiet or self.live:
            return
        with self.lock:
            now = self.clock()
            if now - self.last < self.every_s:
                return
            self.last = now
            step = self.latest or "starting"
            again = " (still)" if step == self.printed else ""
            self.printed = step
        self._print(f"[{_elapsed(now - self.started)}] {step}{again}")

    def _print(self, message: str) -> None:
        print(printable(f"grader: {message}"), file=self.stream, flush=True)

    def __enter__(self) -> Progress:
        if not self.live and not self.quiet:
            self.thread = threading.Thread(target=self._beat, name="progress", daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()

    def _beat(self) -> None:
        while not self.stop.wait(self.BEAT_S):
            self.tick()


def _elapsed(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def _report_init(copied: list[str], created: bool) -> None:
    where = workspace.WORKSPACE + "/"
    if created:
        _say(f"created {where} with {len(copied)} files from skeletons/: edit them there "
             "(git ignores the folder; nothing the course does overwrites it)")
    elif copied:
        _say(f"added {len(copied)} new files to {where}: {', '.join(copied[:4])}"
             + (" ..." if len(copied) > 4 else "") + " (your other files were left as they are)")


def cmd_init(args) -> int:
    created = not workspace.path(ROOT).exists()
    copied = workspace.init(ROOT)
    _report_init(copied, created)
    if not copied:
        _say(f"{workspace.WORKSPACE}/ already has every exercise file; nothing copied")
    return EXIT_OK


def cmd_grade(args) -> int:
    if args.submission is None:
        # The student's own copy; made on first use, completed when exercises were added.
        created = not workspace.path(ROOT).exists()
        _report_init(workspace.init(ROOT), created)
        args.submission = str(workspace.path(ROOT))
    submission = Path(args.submission)
    if not submission.is_absolute() and not submission.exists() and (ROOT / submission).exists():
        submission = ROOT / submission
    submission = submission.resolve()
    if not submission.exists():
        raise GraderError(f"submission directory {args.submission} does not exist")
    if not submission.is_dir():
        raise GraderError(f"submission {args.submission} is not a directory")
    exercises = manifest.select(manifest.discover(ROOT), args.exercise)
    _check_fail_under(args)
    _utf8_path(submission, "the submission")
    if not any((submission / ex.chapter / f).is_file() for ex in exercises for f in ex.files):
        raise GraderError(_no_exercise_files(submission, exercises))
    _output_file(args.json, "--json", "json", submission)
    _output_file(args.junit, "--junit", "xml", submission)
    _check_export_paths(args, submission)
    if args.build_only:
        _refuse_scoreless_exports(args, "--build-only runs nothing")
    build_dir = _build_folder((args.build_dir or _default_build_dir(submission)).resolve(),
                              submission)
    _utf8_path(build_dir, "--build-dir")
    _warn_undecodable_names(submission)

    gpu = _gpu(needed=not args.build_only)
    options = _grade_options(args, submission, build_dir, sandbox.Mode.AUTO)

    with Progress(args.quiet) as progress:
        report = _calibrated_grade(options, exercises, progress, gpu)
    json_path = args.json or options.build_dir / "report.json"
    try:
        render.write_json(report, json_path)
    except OSError as error:
        raise GraderError(f"cannot write the report {json_path}: {error.strerror}") from None
    if args.junit:
        _write(args.junit, render.junit_xml(report), "--junit")
    _write_exports(report, args)
    print(printable(render.terminal(report, sys.stdout, verbose=args.verbose)))
    print(printable(f"\nReport: {json_path}"))
    if args.build_only:
        return _build_only_status(report)
    if report.incomplete:
        print(f"grade incomplete: {len(report.incomplete)} exercise"
              f"{'s' if len(report.incomplete) != 1 else ''} could not be measured "
              f"({', '.join(e.name for e in report.incomplete[:5])}"
              f"{' ...' if len(report.incomplete) > 5 else ''}): another process kept the GPU "
              "busy; grade again when it is free (or --allow-shared-gpu)", file=sys.stderr)
        return EXIT_INCOMPLETE
    if args.fail_under is not None and report.percent + 1e-9 < args.fail_under:
        print(f"score {report.percent:.1f}% is below --fail-under {args.fail_under:g}%",
              file=sys.stderr)
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK


def _check_fail_under(args) -> None:
    if args.fail_under is None:
        return
    if not 0 <= args.fail_under <= 100:  # NaN too
        raise GraderError(f"--fail-under {args.fail_under:g} is not a percentage: give a "
                          "number from 0 to 100")
    if args.build_only:
        raise GraderError("--fail-under compares a score, and --build-only runs nothing, so "
                          "there is none; a --build-only run exits 1 when an exercise does not "
                          "compile")


def _build_only_status(report: model.Report) -> int:
    """A --build-only run's verdict: exit 1 when an exercise did not compile (or its code was
    rejected, which the build-only checks also find), naming them; else 0."""
    said = []
    for status, verb in ((ExerciseStatus.COMPILE_ERROR, "did not compile"),
                         (ExerciseStatus.REJECTED, "rejected")):
        names = [e.name for e in report.exercises if e.status == status]
        if names:
            said.append(f"{len(names)} {verb} ({', '.join(names[:5])}"
                        f"{' ...' if len(names) > 5 else ''})")
    if not said:
        return EXIT_OK
    print(f"--build-only: {'; '.join(said)}", file=sys.stderr)
    return EXIT_NOT_COMPILED


def _no_exercise_files(submission: Path, exercises: list[manifest.Exercise]) -> str:
    """Why a folder has nothing to grade: where the grader looked, and the files that look like
    exercise files but are named or placed otherwise (VectorAdd.cu, a loose vector_add.cu)."""
    example = exercises[0]
    message = (f"no exercise files in {submission}: the grader looks for one folder per "
               f"chapter, e.g. {submission / example.chapter / example.files[0]} (the layout "
               "of skeletons/)")
    wanted = {name: f"{ex.chapter}/{name}" for ex in exercises for name in ex.files}
    near = workspace.near_misses(submission, wanted)
    if near:
        named = [f"{found} (should be {expected})" for found, expected in near[:3]]
        message += (f"; found {', '.join(named)}" + (f" and {len(near) - 3} more like them"
                                                       if len(near) > 3 else ""))
    return message


def _utf8_path(path: Path, what: str) -> None:
    """Meson takes the submission's and the build folder's paths as text and stops with a
    Python error of its own on one that is not UTF-8: said here, on one line."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise GraderError(f"{what} {printable(str(path))}: the path is not UTF-8, which Meson "
                          "cannot build from; rename the folder") from None


def _warn_undecodable_names(submission: Path) -> None:
    """Names a file whose name is not UTF-8: the grade goes on (the build reads names as
    bytes), but reports and other tools (git, a zip upload) may show it garbled or refuse it."""
    odd = []
    for path in submission.glob("ch*/**/*"):
        rel = str(path.relative_to(submission))
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            odd.append(printable(rel))
    for rel in odd[:5]:
        _say(f"warning: {rel}: the file name is not UTF-8 (shown with \\x escapes); the "
             "grade goes on, but rename it: reports and other tools (git, a zip upload) may "
             "garble or refuse it")
    if len(odd) > 5:
        _say(f"warning: {len(odd) - 5} more file names are not UTF-8")


def cmd_list(args) -> int:
    exercises = manifest.discover(ROOT)
    if args.json:
        print(json.dumps([{"key": e.key, "name": e.name, "chapter": e.chapter,
                           "title": e.title, "files": list(e.files),
                           "points": e.max_points} for e in exercises], indent=2))
        return EXIT_OK
    for ex in exercises:
        perf = ", ".join(f"{p.name} {p.points:g}" for p in ex.performance) or "none"
        edit = ", ".join(f"{workspace.WORKSPACE}/{ex.chapter}/{f}" for f in ex.files)
        print(f"{ex.key:<45} {ex.max_points:>5g} pts  {ex.title}  "
              f"[edit: {edit}; performance: {perf}]")
    return EXIT_OK


def cmd_skeletons(args) -> int:
    if template.is_template(ROOT):
        raise GraderError(template.NO_SOLUTIONS)
    solutions, skeleton_dir = ROOT / "solutions", ROOT / "skeletons"
    if args.check:
        differences = skeletons.compare(solutions, skeleton_dir)
        for d in differences:
            print(f"{d.problem:>8}: skeletons/{d.path}")
        if differences:
            print("skeletons/ is out of date: run 'python3 -m grader skeletons'", file=sys.stderr)
            return EXIT_BELOW_THRESHOLD
        print("skeletons/ matches solutions/")
        return EXIT_OK
    written = skeletons.write(solutions, skeleton_dir, force=args.force)
    for rel in written:
        print(f"wrote skeletons/{rel}")
    extra = [d.path for d in skeletons.compare(solutions, skeleton_dir) if d.problem == "extra"]
    for rel in extra:
        print(f"note: skeletons/{rel} has no solution counterpart")
    return EXIT_OK


def cmd_render(args) -> int:
    report = model.Report.load(args.report)
    submission = Path(report.submission) if report.submission else None
    _output_file(args.junit, "--junit", "xml", submission)
    _check_export_paths(args, submission)
    if report.options.get("build_only"):
        _refuse_scoreless_exports(args, f"{args.report} is the report of a --build-only run, "
                                  "which ran nothing")
    if args.junit:
        _write(args.junit, render.junit_xml(report), "--junit")
    _write_exports(report, args)
    print(printable(render.terminal(report, sys.stdout)))
    return EXIT_OK



# --------------------------------------------------- student template and platform exports

_EXPORT_FLAGS = (("--gradescope", "Gradescope results.json"),
                 ("--prairielearn", "PrairieLearn external grading results.json"))


def _add_export_arguments(sub, grade, render_parser) -> None:
    for parser in (grade, render_parser):
        for flag, what in _EXPORT_FLAGS:
            parser.add_argument(flag, type=Path, metavar="PATH", help=f"also write {what} here")

    t = sub.add_parser("export-template", help="write a student repository without solutions "
                       "into a new folder (for a GitHub template repository)")
    t.add_argument("out", type=Path, help="new or empty folder")
    t.add_argument("--no-git", action="store_true", help="do not make it a git repository")
    t.add_argument("--service", metavar="URL",
                   help="its GitHub Classroom workflow runs on GitHub's hosted runners and has "
                   "each push graded by this grading service, with the token kept as the "
                   "Actions secret COURSE_SERVICE_TOKEN (default: a self-hosted GPU runner "
                   "grades)")

    z = sub.add_parser("export-gradescope", help="write a Gradescope autograder zip (setup.sh, "
                       "run_autograder and the course without solutions)")
    z.add_argument("out", type=Path, help="the zip to write, e.g. autograder.zip")
    z.add_argument("--service", metavar="URL",
                   help="an autograder for Gradescope's standard images (no GPU, no CUDA) that "
                   "sends each upload to this grading service ('grader serve') and writes its "
                   "grade; without it, one that grades on an image with CUDA and a GPU")
    z.add_argument("--service-token-file", type=Path, metavar="PATH",
                   help="with --service: copy the service's token from this file into the zip "
                   "(default: run_autograder reads $COURSE_SERVICE_TOKEN)")

    pe = sub.add_parser("export-prairielearn", help="write a PrairieLearn external grader image "
                        "recipe that grades through the grading service (Dockerfile, the "
                        "grader, an entrypoint)",
                        description="Writes into a new folder a Dockerfile (a small Python "
                        "image: no CUDA, no GPU), course/ (the grader package and the chapters, "
                        "no solutions, and the entrypoint, which runs prairielearn-run --service "
                        "with the question's -e), question-info.json (a question's "
                        "externalGradingOptions) and README.md. The token, when given, goes to "
                        "serverFilesCourse/ for the PrairieLearn course, never into the image.")
    pe.add_argument("out", type=Path, help="new or empty folder")
    pe.add_argument("--service", metavar="URL", required=True,
                    help="the grading service ('grader serve'), e.g. https://grading.example.edu")
    pe.add_argument("--service-token-file", type=Path, metavar="PATH",
                    help="copy the service's token from this file into serverFilesCourse/ "
                    "(default: the questions set $COURSE_SERVICE_TOKEN)")
    pe.add_argument("--image", default=exports.PL_IMAGE, metavar="NAME",
                    help="the image's name on Docker Hub, for question-info.json and README.md "
                    "(default: %(default)s)")

    gr = sub.add_parser("gradescope-run", help="grade a Gradescope upload and write its "
                        "results.json (run_autograder calls this)",
                        description="Lays out a student's Gradescope upload as the grader "
                        "expects (loose .cu files, chapter folders or a whole workspace/), "
                        "grades it on this machine's GPU and writes Gradescope's results.json; "
                        "a grade that cannot run still writes one, saying why. The autograder "
                        "zip's run_autograder calls it with the defaults.")
    gr.add_argument("--upload", type=Path, default=Path("/autograder/submission"),
                    help="the student's upload (default: %(default)s)")
    gr.add_argument("--results", type=Path, default=Path("/autograder/results/results.json"),
                    help="the results.json to write (default: %(default)s)")
    _add_runner_sandbox_flag(gr)
    service.add_client_flags(gr)

    pl = sub.add_parser("prairielearn-run", help="grade a PrairieLearn submission and write "
                        "its results.json (a question's external grader entrypoint calls this)",
                        description="Lays out the files PrairieLearn put in /grade/student as "
                        "the grader expects, grades them on this machine's GPU and writes "
                        "PrairieLearn's results.json. A grade that cannot run (no exercise "
                        "file, no GPU, no sandbox, the grader failing) still writes one, not "
                        "gradable, saying why, and the command exits 0: PrairieLearn reads the "
                        "file, and without one shows only that grading failed. Exit 2 only when "
                        "the results file itself cannot be written, or an argument is wrong.")
    pl.add_argument("--student", type=Path, default=Path("/grade/student"),
                    help="the student's files (default: %(default)s)")
    pl.add_argument("--results", type=Path, default=Path("/grade/results/results.json"),
                    help="the results.json to write (default: %(default)s)")
    pl.add_argument("-e", "--exercise", action="append", default=[], metavar="NAME",
                    help="grade only this exercise or chapter (repeatable); PrairieLearn gives "
                    "a grading job 600 s at most, so one exercise per question")
    _add_runner_sandbox_flag(pl)
    service.add_client_flags(pl)

    cr = sub.add_parser("classroom-run", help="send workspace/ to the grading service and save "
                        "its report (the GitHub Classroom workflow of export-template --service "
                        "calls this)",
                        description="Lays out the exercise files of the student's workspace/ "
                        "as the grader expects, sends them to the grading service, waits for its "
                        "grade and writes the service's JSON report (then classroom-points turns "
                        "it into each chapter's points). Nothing is compiled or run here: no GPU, "
                        "no CUDA. Exit 2, writing no report, when the service cannot grade it.")
    cr.add_argument("--workspace", type=Path, default=None, metavar="DIR",
                    help="the student's work (default: workspace/)")
    cr.add_argument("--json", type=Path, default=Path(exports.CLASSROOM_REPORT), metavar="PATH",
                    help="the report to write (default: %(default)s)")
    cr.add_argument("--client-ref", default="", metavar="TEXT",
                    help="the submission's reference at the service, e.g. "
                    "$GITHUB_REPOSITORY@$GITHUB_SHA")
    service.add_client_flags(cr)

    c = sub.add_parser("classroom-points", help="print one chapter's points from a report as "
                       "the GitHub Classroom grading reporter reads them (step output lines "
                       "earned= and missed=)")
    c.add_argument("report", type=Path, help="the JSON report of the grade")
    c.add_argument("--chapter", required=True, help="chapter folder, e.g. ch01_programming_model")
    c.add_argument("--max-score", type=float, required=True,
                   help="the chapter's points, more than 0 (the generated workflow has them)")


def _add_runner_sandbox_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-sandbox", action="store_true",
                   help="grade even where this machine cannot give the course's sandbox, the "
                   "students' programs then running with the grader's own rights (default: "
                   "such a machine grades nothing, and the results say why)")


def _check_export_paths(args, submission: Path | None) -> None:
    for flag, _ in _EXPORT_FLAGS:
        _output_file(getattr(args, flag[2:]), flag, "json", submission)
    _output_file(args.html, "--html", "html", submission)


def _refuse_scoreless_exports(args, why: str) -> None:
    """Gradescope and PrairieLearn results are a score: a run without one has none to give
    (a 0 there would be a grade)."""
    for flag, _ in _EXPORT_FLAGS:
        if getattr(args, flag[2:]) is not None:
            raise GraderError(f"{flag} writes a score, and {why}: there is none to write")


def _write_exports(report: model.Report, args) -> None:
    views = {"--gradescope": exports.gradescope, "--prairielearn": exports.prairielearn}
    for flag, view in views.items():
        path = getattr(args, flag[2:])
        if path is not None:
            _write(path, exports.results_text(view(report)), flag)
    _write_html(report, args)


# ------------------------------------------------------------------------------ HTML page

def _add_html_flags(*parsers) -> None:
    for parser in parsers:
        parser.add_argument("--html", type=Path, metavar="PATH",
                            help="also write a self-contained HTML page with plots here "
                            "(needs jinja2 and matplotlib; skipped with a warning without them)")


def _write_html(report: model.Report, args) -> None:
    # Without the libraries (an offline GPU machine) the grade goes on: one warning line.
    if args.html is None:
        return
    try:
        html_report.write(report, args.html)
    except html_report.Unavailable as missing:
        _say(f"warning: {missing}")
    except (OSError, UnicodeError) as error:
        raise GraderError(f"cannot write --html {args.html}: "
                          f"{getattr(error, 'strerror', None) or error}") from None


def cmd_export_template(args) -> int:
    out = args.out.resolve()
    _refuse_protected(out, "export-template", None)
    if out.is_dir():
        _writable(out, "export-template")
    elif not out.exists():
        _writable(_existing_parent(out), f"export-template {args.out}: its folder")
    url = exports.service_url(args.service) if args.service is not None else None
    workflow = exports.classroom_workflow(manifest.discover(ROOT), url)
    try:
        written = template.export(ROOT, out, git=not args.no_git,
                                  extra={".github/workflows/classroom.yml": workflow})
    except OSError as error:
        raise GraderError(f"export-template {args.out}: cannot write "
                          f"{error.filename or out} ({error.strerror})") from None
    _say(f"wrote a student template of {len(written)} files to {out} (no solutions/)"
         + ("" if args.no_git else "; committed as a new git repository")
         + (f"; its workflow sends each push to {url} (give the repositories the Actions "
            f"secret {exports.CLASSROOM_SECRET})" if url else ""))
    return EXIT_OK


def _service_export_options(args) -> tuple[str | None, str | None]:
    """--service and --service-token-file of an export: the URL checked, the token read."""
    if args.service is None:
        if args.service_token_file is not None:
            raise GraderError("--service-token-file is for --service URL")
        return None, None
    url = exports.service_url(args.service)
    token = (exports.service_token(args.service_token_file)
             if args.service_token_file is not None else None)
    return url, token


def cmd_export_gradescope(args) -> int:
    if template.is_template(ROOT):
        raise GraderError(f"{template.NO_SOLUTIONS}; export from the course itself")
    url, token = _service_export_options(args)
    out = _output_file(args.out, "export-gradescope", "zip")
    try:
        names = exports.gradescope_zip(ROOT, out, url, token)
    except OSError as error:
        raise GraderError(f"cannot write export-gradescope {out}: {error.strerror}") from None
    if url is None:
        _say(f"wrote {out} ({len(names)} files): upload it as the assignment's autograder; it "
             "needs an image with the CUDA toolkit and a GPU (docs/instructors.md)")
    else:
        _say(f"wrote {out} ({len(names)} files): upload it as the assignment's autograder, on "
             f"a standard image; each upload is graded by {url}, the token "
             + ("in the zip" if token else "from $COURSE_SERVICE_TOKEN (docs/instructors.md)"))
    return EXIT_OK


def cmd_export_prairielearn(args) -> int:
    url, token = _service_export_options(args)
    out = args.out.resolve()
    _refuse_protected(out, "export-prairielearn", None)
    template.check_target(out)
    _writable(out if out.is_dir() else _existing_parent(out), f"export-prairielearn {args.out}")
    try:
        written = exports.prairielearn_export(ROOT, out, url, token, args.image)
    except OSError as error:
        raise GraderError(f"export-prairielearn {args.out}: cannot write "
                          f"{error.filename or out} ({error.strerror})") from None
    _say(f"wrote a PrairieLearn grader of {len(written)} files to {out}: build and push its "
         f"image, then set each question up as its README.md says; it grades through {url}")
    return EXIT_OK


def cmd_classroom_run(args) -> int:
    if not args.service:
        raise GraderError("classroom-run sends the work to a grading service: give --service URL")
    folder = args.workspace or ROOT / workspace.WORKSPACE
    if not folder.is_dir():
        raise GraderError(f"{folder} is not a folder: classroom-run sends the student's "
                          "workspace/ (or --workspace DIR)")
    _output_file(args.json, "--json", "json", folder.resolve())
    from grader.service import client
    token = client.token_from(args.service_token_file)
    work = ROOT / "build" / "classroom-service"
    grade = client.grade_with_service(args.service, token, work, reference=args.client_ref,
                                      wait_s=float(args.service_wait or 3600), say=_say)
    report = exports.classroom_run(ROOT, folder, work, grade)
    render.write_json(report, args.json)
    print(printable(render.terminal(report, sys.stdout)))
    _say(f"wrote {args.json}: the service's report")
    return EXIT_OK


def cmd_gradescope_run(args) -> int:
    # Exit 0 once results.json is written, whatever it says (Gradescope reads the file); exit
    # 2 only when it cannot be.
    work = ROOT / "build" / "gradescope"
    _output_file(args.results, "--results", "json", args.upload.resolve())
    try:
        data = exports.gradescope_run(ROOT, args.upload, args.results, work,
                                      service.service_grade(args, work)
                                      or exports.grade_with_cli(ROOT, work,
                                                                sandbox=not args.no_sandbox))
    except OSError as error:
        raise GraderError(f"gradescope-run: cannot write {error.filename or args.results} "
                          f"({error.strerror})") from None
    _say(f"wrote {args.results}: score {data['score']:g}")
    return EXIT_OK


def cmd_prairielearn_run(args) -> int:
    # As gradescope-run: exit 0 once results.json is written. A wrong -e is the question's
    # configuration, not the student's doing: refused (exit 2) rather than shown to students.
    manifest.select(manifest.discover(ROOT), args.exercise)
    work = ROOT / "build" / "prairielearn"
    _output_file(args.results, "--results", "json", args.student.resolve())
    try:
        data = exports.prairielearn_run(ROOT, args.student, args.results, work,
                                        service.service_grade(args, work, args.exercise)
                                        or exports.grade_with_cli(ROOT, work,
                                                                  sandbox=not args.no_sandbox,
                                                                  names=args.exercise),
                                        args.exercise)
    except OSError as error:
        raise GraderError(f"prairielearn-run: cannot write {error.filename or args.results} "
                          f"({error.strerror})") from None
    _say(f"wrote {args.results}: " + (f"score {data['score']:g}" if data.get("gradable", True)
                                      else f"not gradable: {data['format_errors'][0]}"))
    return EXIT_OK


def cmd_classroom_points(args) -> int:
    if not (math.isfinite(args.max_score) and args.max_score > 0):
        raise GraderError(f"--max-score {args.max_score:g} must be a number above 0 (the "
                          "chapter's points)")
    try:
        report, problem = model.Report.load(args.report), ""
    except GraderError as error:
        report, problem = None, f"no grading report: {error}"
    if report is not None:
        # A typo in the workflow must fail its step (exit 2), not report 0 points for a
        # chapter that does not exist. The report's own chapters count too (a report of an
        # older course); without a report every chapter reports that error anyway.
        chapters = sorted({ex.chapter for ex in manifest.discover(ROOT)})
        known = set(chapters) | {ex.chapter for ex in report.exercises}
        if args.chapter not in known:
            raise GraderError(f"--chapter {args.chapter} is not a chapter of this course; its "
                              f"chapters are {', '.join(chapters)}")
    print(exports.classroom_output(
        exports.classroom_results(report, args.chapter, args.max_score, problem)))
    return EXIT_OK


EXPORT_HANDLERS = {"export-template": cmd_export_template,
                   "export-gradescope": cmd_export_gradescope,
                   "export-prairielearn": cmd_export_prairielearn,
                   "classroom-run": cmd_classroom_run,
                   "gradescope-run": cmd_gradescope_run,
                   "prairielearn-run": cmd_prairielearn_run,
                   "classroom-points": cmd_classroom_points}

def _add_instructor_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--secret", metavar="SECRET",
                   help="instructors: mix this secret into the inputs' seed (default: "
                   f"${SECRET_ENV}, which keeps it out of the process list), so that the "
                   "printed seed alone does not replay the inputs; the report records only "
                   "that a secret was used")
    p.add_argument("--hidden", action="store_true",
                   help="instructors: compile in and run the hidden test cases "
                   f"(<exercise>{hidden.HIDDEN_TEST_SUFFIX}); the report counts them but "
                   "shows neither their names nor their messages")


def _instructor_options(args) -> dict:
    if args.secret == "":
        raise GraderError("--secret is empty")
    secret = args.secret if args.secret is not None else os.environ.get(SECRET_ENV)
    return {"secret": secret or None, "hidden": args.hidden}


def _add_batch_parser(sub) -> None:
    b = sub.add_parser("batch", help="instructors: grade many submissions into a gradebook "
                       "(resumable)",
                       description="Grades every student of ROSTER_OR_DIR into DIR: "
                       "reports/<student>.json, logs/<student>.log, gradebook.csv and "
                       "leaderboard.csv; one after another, or several at once (--jobs), or one "
                       "per GPU of this machine (--gpus), each pinned to its GPU. Running the "
                       "same command again resumes: students with a complete report are "
                       "skipped. Exit status: 0 when every student was graded, 1 when some "
                       "could not be, 2 for bad input, 3 when some grades are incomplete (a "
                       "measurement not taken: another process kept the GPU busy; the same "
                       "command grades them again).")
    b.add_argument("roster", type=Path, metavar="ROSTER_OR_DIR",
                   help="a folder of student folders (each laid out like skeletons/; the "
                   "folder name is the student id) or a CSV file: a header row, then "
                   "student id,path (paths relative to the CSV's folder)")
    b.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="where reports, logs, build directories and the gradebook go")
    b.add_argument("--regrade", nargs="?", action="append", const=batch.ALL_STUDENTS,
                   metavar="STUDENT", help="grade again students that already have a report: "
                   "all of them, or this one (repeatable); put it after ROSTER_OR_DIR")
    b.add_argument("-e", "--exercise", action="append", default=[], metavar="NAME",
                   help="grade only this exercise or chapter; repeatable")
    b.add_argument("--seed", type=str, help="seed for the random inputs, the same for every "
                   "student (default: a new one, kept in DIR/batch.json for re-runs)")
    b.add_argument("--build-only", action="store_true", help="only compile (no GPU needed)")
    b.add_argument("--no-sanitizer", action="store_true", help="skip compute-sanitizer")
    b.add_argument("--no-benchmark", action="store_true", help="skip benchmarks")
    b.add_argument("--cuda-arch", default="auto", help="compute capability to build for")
    b.add_argument("-j", "--jobs", type=_positive("--jobs"), default=1, dest="at_once",
                   metavar="N", help="students graded at once (default 1; with --gpus, on "
                   "each GPU): their tests overlap, their benchmarks take turns on the GPU")
    b.add_argument("--gpus", metavar="all|0,1,...",
                   help="grade on these GPUs at once (nvidia-smi indexes, or all), each student "
                   "pinned to one GPU")
    b.add_argument("--compile-jobs", type=_positive("--compile-jobs"), dest="jobs", metavar="N",
                   help="parallel compile jobs of each student's build")
    _add_sharing_flag(b)
    _add_no_sandbox_flag(b)
    _add_parallel_flag(b)
    _add_instructor_flags(b)
    s = b.add_argument_group(
        "on a Slurm cluster", "--slurm submits a job array instead of grading here: one task "
        "per submission (or --group-size of them), one GPU each, building on the node's "
        "scratch, reports into DIR; a merge job that waits for the whole array rebuilds the "
        "gradebook and names the tasks that failed, timed out or were preempted. The same "
        "command again submits only the students still without a report.")
    s.add_argument("--slurm", action="store_true", help="grade through Slurm (run this on a "
                   "login node; DIR and the course must be on a file system the nodes share)")
    s.add_argument("--partition", help="sbatch --partition")
    s.add_argument("--account", help="sbatch --account")
    s.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                   help="one more sbatch option, passed through (repeatable), e.g. "
                   "--sbatch-arg=--qos=class")
    s.add_argument("--group-size", type=_positive("--group-size"), default=1, metavar="N",
                   help="students per task (default 1)")
    s.add_argument("--time", type=_positive("--time"), metavar="MINUTES",
                   help="each task's time limit (default: 3x a full grade measured on an H100 "
                   "plus the build, per student of the task: 16 minutes for one student, 8 with "
                   "--build-only; docs/grading_time.md)")
    s.add_argument("--max-parallel", type=_positive("--max-parallel"), metavar="N",
                   help="tasks running at once (the array's %%N)")
    s.add_argument("--scratch", metavar="DIR", help="node-local folder for builds and the "
                   "compiler cache (default: $SLURM_TMPDIR, else $TMPDIR, else /tmp, on the node)")
    s.add_argument("--slurm-dry-run", action="store_true",
                   help="write the round's scripts under DIR/slurm and submit nothing")


def _slurm_settings(args) -> slurm.SlurmSettings:
    settings = slurm.SlurmSettings(partition=args.partition, account=args.account,
                                   sbatch_args=args.sbatch_arg, group_size=args.group_size,
                                   time_minutes=args.time, max_parallel=args.max_parallel,
                                   submit=not args.slurm_dry_run)
    if args.scratch:
        settings.scratch = args.scratch
    return settings


def _batch_gpus(args) -> tuple[list[model.GpuInfo], model.GpuInfo | None]:
    """The GPUs of --gpus, and the GPU of a batch without it (None: none needed or none)."""
    if args.gpus is not None:
        return batch.select_gpus(args.gpus, tools.list_gpus()), None
    if args.slurm:  # a login node needs none
        return [], None
    return [], _gpu(needed=not args.build_only)


def cmd_batch(args) -> int:
    exercises = manifest.select(manifest.discover(ROOT), args.exercise)
    for refused, message in (
            (args.gpus is not None and args.slurm,
             "--gpus is not for --slurm: each Slurm task gets a GPU of its own"),
            (args.gpus is not None and args.build_only,
             "--gpus is not for --build-only, which runs nothing on a GPU"),
            (args.at_once != 1 and args.slurm,
             "--jobs is not for --slurm: --max-parallel says how many tasks run at once")):
        if refused:
            raise GraderError(message)
    slurm_only = [f for f, v in (("--partition", args.partition), ("--account", args.account),
                                 ("--sbatch-arg", args.sbatch_arg), ("--time", args.time),
                                 ("--max-parallel", args.max_parallel),
                                 ("--scratch", args.scratch),
                                 ("--slurm-dry-run", args.slurm_dry_run),
                                 ("--group-size", args.group_size != 1)) if v]
    if slurm_only and not args.slurm:
        raise GraderError(f"{slurm_only[0]} is for grading through Slurm: add --slurm")
    settings = _slurm_settings(args) if args.slurm else None
    roster = args.roster.resolve()
    students = batch.read_roster(roster)
    out = args.out.resolve()
    batch.prepare_out(out, roster)
    gpus, gpu = _batch_gpus(args)
    gpu_of = {g.uuid: g for g in gpus}  # a student's pinned GPU, for its report
    # The template of every student's options; a Slurm node is checked by its task.
    options = _grade_options(args, ROOT, out, sandbox.Mode.REQUIRED,
                             check_sandbox=not args.slurm)

    def grade(student, student_options, progress):
        return _calibrated_grade(student_options, exercises, progress,
                                 gpu_of.get(student_options.pin_gpu, gpu))

    the_batch = batch.Batch(students, out, exercises, options, grade, regrade=args.regrade,
                            seed_given=args.seed is not None, say=_say, gpus=gpus,
                            jobs=args.at_once)
    if settings is not None:
        return slurm.submit(the_batch, settings, args.exercise, roster,
                            gpus=0 if args.build_only else 1, say=_say)
    # kill (SIGTERM) stops like Ctrl-C: the running programs are ended, the files stay whole.
    previous = signal.signal(signal.SIGTERM, batch.interrupt)
    try:
        return the_batch.run()
    finally:
        signal.signal(signal.SIGTERM, previous)


def _add_slurm_parsers(sub) -> None:
    t = sub.add_parser("slurm-task", help="(run by Slurm for batch --slurm) grade one task's "
                       "students")
    t.add_argument("out", type=Path, help="the batch's --out folder")
    t.add_argument("--round", type=int, required=True, help="the submission round's number")
    t.add_argument("--index", type=int, required=True, help="this task's index in the array")
    t.add_argument("--scratch", type=Path, required=True, help="this task's build folder")
    c = sub.add_parser("slurm-cleanup", help="(run by Slurm for batch --slurm) remove a "
                       "task's build folder, ending what still works in it")
    c.add_argument("scratch", type=Path, help="the task's build folder")
    m = sub.add_parser("slurm-merge", help="(run by Slurm for batch --slurm) rebuild the "
                       "gradebook and name the tasks that ended early")
    m.add_argument("out", type=Path, help="the batch's --out folder")
    m.add_argument("--round", type=int, required=True, help="the submission round's number")


def cmd_slurm_task(args) -> int:
    record = slurm.load_round(args.out.resolve(), args.round)
    gpu = _gpu(not record["options"]["build_only"],
               "no NVIDIA GPU on this node (nvidia-smi lists none): the task asked for one "
               "with --gres=gpu:1; check the partition's GPUs")
    exercises = manifest.select(manifest.discover(ROOT), record["options"]["exercises"])

    def grade(student, student_options, progress):
        return _calibrated_grade(student_options, exercises, progress, gpu)

    return slurm.run_task(args.out.resolve(), args.round, args.index, args.scratch.resolve(),
                          ROOT, grade, say=_say)


def cmd_slurm_cleanup(args) -> int:
    if slurm.remove_scratch(args.scratch.absolute()):
        return 0
    print(f"grader: could not remove {args.scratch}", file=sys.stderr)
    return 1


def cmd_slurm_merge(args) -> int:
    record = slurm.load_round(args.out.resolve(), args.round)
    exercises = manifest.select(manifest.discover(ROOT), record["options"]["exercises"])
    return slurm.merge(args.out.resolve(), args.round, exercises, say=_say)


# ------------------------------------------------------------------------- calibration

def _calibrated_grade(options: GradeOptions, exercises: list[manifest.Exercise], progress,
                      gpu: model.GpuInfo | None) -> model.Report:
    """A grade with the thresholds this GPU model's calibration decides (grade, batch and
    Slurm alike), the report saying which; a --build-only run scores nothing, so looks none
    up."""
    chosen, record = calibration.for_grade(ROOT, exercises, None if options.build_only else gpu)
    report = Grader(options, chosen, progress, gpu).run()
    report.calibration = record
    return report


def _add_calibrate_parser(sub) -> None:
    c = sub.add_parser(
        "calibrate", help="instructors: check the course's thresholds on this GPU model",
        description="Grades the reference solutions (solutions/) several times on this GPU, "
        "or reads saved reports of such grades, and for every performance metric reports the "
        "ratio of each run, their median and spread, and how far the reference's worst run "
        "clears full marks; a threshold it does not clear by the margin is flagged. Writes "
        "calibrations/<gpu>.json, which 'grade' reads on this GPU model. --decide records "
        "the instructor's decision for a flagged threshold: keep it, lower it to the "
        "reference's median less the margin, or drop its points.")
    c.add_argument("--runs", type=_positive("--runs"), metavar="R",
                   help=f"grades of the solutions (default {calibration.DEFAULT_RUNS})")
    c.add_argument("--margin", type=float, metavar="M",
                   help="how far above full marks the reference's worst run must be, as a "
                   f"fraction (default {calibration.DEFAULT_MARGIN:g}: 5%%)")
    c.add_argument("--out", type=Path, metavar="DIR",
                   help="folder of the calibration files (default: calibrations/)")
    c.add_argument("--from-report", nargs="+", action="extend", type=Path, default=[],
                   metavar="REPORT", help="read these JSON reports of grades of the solutions "
                   "instead of grading (e.g. scripts/gpu_check.sh's)")
    c.add_argument("--full-at", action="append", default=[], metavar="EXERCISE/METRIC=VALUE",
                   help="check this full-marks ratio instead of the manifest's, for this "
                   "calibration only (repeatable)")
    c.add_argument("-e", "--exercise", action="append", default=[], metavar="NAME",
                   help="calibrate only this exercise or chapter (repeatable); the file's "
                   "other metrics stay as they were")
    c.add_argument("--profile", action="store_true",
                   help="grade with --profile, keeping the solutions' profiler counters")
    c.add_argument("--decide", action="append", default=[],
                   metavar="EXERCISE/METRIC=keep|lower|drop",
                   help="record a decision in a calibration file instead of calibrating "
                   "(repeatable)")
    c.add_argument("--file", type=Path, metavar="PATH", help="the calibration file --decide "
                   "edits (default: this GPU's, calibrations/<gpu>.json)")


def cmd_calibrate(args) -> int:
    if args.decide:
        return _calibrate_decide(args)
    if args.file is not None:
        raise GraderError("--file names the calibration --decide edits: add --decide")
    margin = calibration.DEFAULT_MARGIN if args.margin is None else args.margin
    if not 0 <= margin < 1:  # NaN too
        raise GraderError(f"--margin {args.margin:g} is not a fraction: give a number from 0 "
                          "to below 1, e.g. 0.05")
    full_at = calibration.parse_full_at(args.full_at)
    course = manifest.discover(ROOT)
    only = ({ex.name for ex in manifest.select(course, args.exercise)}
            if args.exercise else None)
    out = _calibration_folder(args.out)
    if args.from_report:
        for given, flag in ((args.runs, "--runs"), (args.profile, "--profile")):
            if given:
                raise GraderError(f"{flag} is for grading the solutions, and --from-report "
                                  "reads reports instead")
        reports = [model.Report.load(path) for path in args.from_report]
        names = [str(path) for path in args.from_report]
    else:
        if template.is_template(ROOT):
            raise GraderError(f"{template.NO_SOLUTIONS}, and calibrate grades them; calibrate "
                              "in the course itself, or give --from-report")
        unknown = sorted(set(full_at) - set(calibration.course_thresholds(course)))
        if unknown:  # said before a grade of several minutes, not after
            raise GraderError(f"--full-at {unknown[0]}: the course has no such metric "
                              "('python3 -m grader list' shows each exercise's)")
        _gpu(needed=True)
        runs = args.runs or calibration.DEFAULT_RUNS
        reports = calibration.grade_runs(ROOT, runs, args.exercise, args.profile, _say)
        names = [f"run {i}" for i in range(1, runs + 1)]
    gpu_name = next((r.gpu.name for r in reports if r.gpu and r.gpu.name), "")
    path = out / f"{calibration.slug(gpu_name)}.json" if gpu_name else None
    previous = calibration.load(path) if path is not None and path.is_file() else None
    data = calibration.compute(reports, exercises=course, margin=margin, full_at=full_at,
                               only=only, previous=previous, names=names)
    calibration.write(path, data)
    measured = [key for key in data["metrics"] if only is None
                or key.split("/", 1)[0] in only]
    print(printable(f"Calibration of {data['gpu']['name']} from {data['runs']} run"
                    f"{'s' if data['runs'] != 1 else ''} of the solutions"))
    print(printable(calibration.table(data, measured)))
    _say(f"wrote {calibration.relative(path, ROOT)}"
         + ("; --full-at thresholds are recorded as checked, and grading keeps the "
            "manifest's unless a decision lowers them" if full_at else ""))
    return EXIT_OK


def _calibration_folder(given: Path | None) -> Path:
    folder = (given or calibration.folder(ROOT)).resolve()
    if folder.exists() and not folder.is_dir():
        raise GraderError(f"--out {given} is a file; give the folder of the calibrations")
    _refuse_protected(folder, "--out", None)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise GraderError(f"--out {given or folder}: cannot make it ({error.strerror})") from None
    _writable(folder, "--out")
    return folder


def _calibrate_decide(args) -> int:
    grading = [flag for flag, given in (("--runs", args.runs), ("--margin", args.margin),
                                        ("--out", args.out), ("--from-report", args.from_report),
                                        ("--full-at", args.full_at), ("--exercise", args.exercise),
                                        ("--profile", args.profile)) if given]
    if grading:
        raise GraderError(f"{grading[0]} is for calibrating, and --decide only records a "
                          "decision; give them apart")
    decisions = calibration.parse_decisions(args.decide)
    if args.file is not None:
        path = args.file
    else:
        gpu = _gpu(True, "no NVIDIA GPU here to name its calibration: give --file "
                   "calibrations/<gpu>.json")
        path = calibration.path_for(ROOT, gpu.name)
    data = calibration.load(path)
    said = calibration.decide(data, decisions)
    calibration.write(path, data)
    for line in said:
        print(printable(line))
    _say(f"wrote {calibration.relative(path, ROOT)}")
    return EXIT_OK


def _warn_incomplete() -> None:
    for folder in manifest.incomplete_folders(ROOT):
        print(f"grader: warning: {folder.relative_to(ROOT)} has no manifest "
              f"{folder.name}.toml; skipped", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    handlers = {"init": cmd_init, "grade": cmd_grade, "list": cmd_list,
                "skeletons": cmd_skeletons, "render": cmd_render, "batch": cmd_batch,
                "slurm-task": cmd_slurm_task, "slurm-cleanup": cmd_slurm_cleanup,
                "slurm-merge": cmd_slurm_merge, "calibrate": cmd_calibrate, **EXPORT_HANDLERS,
                "serve": service.cmd_serve, "serve-token": service.cmd_serve_token}
    try:
        args = _parser().parse_args(argv)  # a value _positive refuses raises GraderError
        if args.command in ("grade", "list"):
            _warn_incomplete()
        status = handlers[args.command](args)
        sys.stdout.flush()  # a closed pipe shows here, inside the try, not at exit
        return status
    except GraderError as error:
        print(printable(f"grader: error: {error}"), file=sys.stderr)
        return EXIT_GRADER_ERROR
    except KeyboardInterrupt:
        print("grader: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (python3 -m grader list | head): not an error of ours. Point
        # stdout at nothing so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
