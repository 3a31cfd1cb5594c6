"""Exercise manifests: one TOML file per exercise, chapters/<chapter>/<name>/<name>.toml.

The grader discovers exercises from these files alone, so adding an exercise needs no grader
change. Every field is validated; a problem raises ManifestError naming the file and field.

Code shared by several exercises (a ladder's rules, tests, benchmark and course sources) lives
in a folder of the same chapter that has a header but no manifest, chapters/<chapter>/<shared>/
with <shared>.h; an exercise names it with `shared = "<shared>"`.
"""

from __future__ import annotations

import fnmatch
import math
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader import counters, hidden
from grader.binary import FORBIDDABLE_LIBRARIES
from grader.errors import GraderError, ManifestError

CHAPTER_PATTERN = re.compile(r"^ch\d{2}_[a-z0-9_]+$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
LIBRARIES = ("cublas", "cudadevrt")
# A function a calls_api or avoids_api rule names: a C identifier, or alternatives joined by
# "|" (calls_api: one of them is enough).
API_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\|[A-Za-z_][A-Za-z0-9_]*)*$")
VOIDABLE = ("performance", "all")
# What a [proof] names as evidence that the student's code does what the exercise teaches.
PROOF_KINDS = ("rule", "test", "bench")


@dataclass(frozen=True)
class Performance:
    name: str
    points: float
    measure: str
    baseline: str
    full_at: float
    zero_at: float
    description: str = ""
    hint: str = ""


@dataclass(frozen=True)
class Technique:
    """A rule about how the student's compiled code does its work. Its points are awarded only
    when the exercise is correct; `voids = "performance"` also voids the performance points
    when the rule fails, and `voids = "all"` voids every point of the exercise (the rule is what
    the exercise teaches: a host-only answer to a dynamic-parallelism exercise earns nothing)."""
    name: str
    rule: str
    points: float
    kernel: str = ""                      # regex searched in demangled kernel names
    value: int | tuple[str, ...] | None = None  # max_registers: N; no_library_calls: names;
                                                # calls_api, avoids_api: function names
    voids: str = ""
    message: str = ""                     # what the rule is about, shown when it fails
    hint: str = ""


@dataclass(frozen=True)
class Proof:
    """How the grader establishes that a submission uses the technique the exercise teaches:
    the technique rules, test cases and benchmark measurements that fail without it, and what
    no check can establish. Course documentation, checked against the manifest and tests; it
    awards nothing."""
    teaches: str
    shown_by: tuple[str, ...] = ()       # "rule:<technique>", "test:<Suite.Case>", "bench:<name>"
    unprovable: str = ""

    def named(self, kind: str) -> tuple[str, ...]:
        """The names shown_by gives for one kind ("rule", "test" or "bench")."""
        return tuple(item.split(":", 1)[1] for item in self.shown_by
                     if item.split(":", 1)[0] == kind)


@dataclass(frozen=True)
class Exercise:
    name: str
    chapter: str
    title: str
    files: tuple[str, ...]
    directory: Path
    manifest: Path
    summary: str = ""
    libraries: tuple[str, ...] = ()
    rdc: bool = False
    shared: str = ""
    course_calls: tuple[str, ...] = ()   # course functions the student's code may call
    min_cc: float = 7.0
    correctness_points: float = 0.0
    test_timeout_s: float = 60.0
    case_timeout_s: float | None = None   # one case's limit: the test main stops the run there
    # The tests' verdicts depend on timing or on the GPU's free resources: they (and their
    # sanitizer runs) hold the GPU alone, never beside another grader's programs.
    tests_alone: bool = False
    # The cases read the device's free memory (leak checks): split over processes (a student's
    # re-grade with cores to spare), each would see its siblings' allocations, so they run in
    # one process.
    tests_one_process: bool = False
    sanitizer_tools: tuple[str, ...] = ("memcheck",)
    sanitizer_filter: str = "*"
    # A narrower filter for a tool whose runs cost far more than memcheck's (racecheck over
    # many barriers): (tool, filter) pairs; the other tools run sanitizer_filter.
    sanitizer_tool_filters: tuple[tuple[str, str], ...] = ()
    sanitizer_timeout_s: float = 300.0
    sanitizer_leak_check: bool = False  # memcheck --leak-check full: device memory left allocated
    benchmark_timeout_s: float = 180.0
    performance: tuple[Performance, ...] = field(default_factory=tuple)
    technique: tuple[Technique, ...] = field(default_factory=tuple)
    proof: Proof | None = None
    # [profile] counters: what grade --profile reads with Nsight Compute (grader/counters.py).
    profile_counters: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.chapter}/{self.name}"

    def sanitizer_filter_for(self, tool: str) -> str:
        """The small cases `tool` runs: its own filter, else the exercise's."""
        return dict(self.sanitizer_tool_filters).get(tool, self.sanitizer_filter)

    @property
    def chapter_number(self) -> str:
        return self.chapter[:4]

    @property
    def shared_directory(self) -> Path | None:
        """The shared course code folder named by `shared`, or None."""
        return self.directory.parent / self.shared if self.shared else None

    @property
    def max_points(self) -> float:
        return (self.correctness_points + sum(p.points for p in self.performance)
                + sum(t.points for t in self.technique))


class _Table:
    """Typed access to one TOML table, reporting problems against the manifest path."""

    def __init__(self, path: Path, prefix: str, data: object, known: set[str]):
        if not isinstance(data, dict):
            raise ManifestError(path, prefix, "must be a table")
        unknown = sorted(set(data) - known)
        if unknown:
            raise ManifestError(path, f"{prefix}.{unknown[0]}",
                                f"unknown field (known: {', '.join(sorted(known))})")
        self.path, self.prefix, self.data = path, prefix, data

    def _get(self, key, types, default, required):
        where = f"{self.prefix}.{key}"
        if key not in self.data:
            if required:
                raise ManifestError(self.path, where, "is required")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in types:
            raise ManifestError(self.path, where, f"must be {types[0].__name__}, not a boolean")
        if not isinstance(value, types):
            raise ManifestError(self.path, where,
                                f"must be {' or '.join(t.__name__ for t in types)}, "
                                f"not {type(value).__name__}")
        return value

    def text(self, key, default="", required=False) -> str:
        return self._get(key, (str,), default, required)

    def number(self, key, default=0.0, required=False, minimum=None, positive=False) -> float:
        value = float(self._get(key, (int, float), default, required))
        if not math.isfinite(value):
            raise ManifestError(self.path, f"{self.prefix}.{key}", "must be a finite number")
        if positive and value <= 0:
            raise ManifestError(self.path, f"{self.prefix}.{key}", "must be greater than 0")
        if minimum is not None and value < minimum:
            raise ManifestError(self.path, f"{self.prefix}.{key}", f"must be at least {minimum}")
        return value

    def flag(self, key, default=False) -> bool:
        return self._get(key, (bool,), default, False)

    def strings(self, key, default=(), required=False, allowed=None) -> tuple[str, ...]:
        value = self._get(key, (list,), list(default), required)
        for item in value:
            if not isinstance(item, str) or not item:
                raise ManifestError(self.path, f"{self.prefix}.{key}",
                                    "must be a list of non-empty strings")
            if allowed is not None and item not in allowed:
                raise ManifestError(self.path, f"{self.prefix}.{key}",
                                    f"unknown value {item!r} (allowed: {', '.join(allowed)})")
        return tuple(value)


def _tool_filters(path: Path, sanitizer: _Table, tools: tuple[str, ...]
                  ) -> tuple[tuple[str, str], ...]:
    """[sanitizer.tool_filters]: a filter of its own for a tool of `tools` other than memcheck,
    whose filter (gtest_filter) is the one every small test must be covered by."""
    table = _Table(path, "sanitizer.tool_filters", sanitizer.data.get("tool_filters", {}),
                   set(tools) - {"memcheck"})
    filters = []
    for tool in tools:
        if tool in table.data:
            if not table.text(tool).strip():
                raise ManifestError(path, f"sanitizer.tool_filters.{tool}",
                                    "must be a non-empty GoogleTest filter")
            filters.append((tool, table.text(tool)))
    return tuple(filters)


def load_manifest(path: Path) -> Exercise:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(path, "", "file not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ManifestError(path, "", f"not valid TOML ({error})") from None

    top = _Table(path, "manifest", data,
                 {"exercise", "correctness", "sanitizer", "benchmark", "performance",
                  "technique", "proof", "profile"})
    ex = _Table(path, "exercise", data.get("exercise"),
                {"name", "chapter", "title", "summary", "files", "libraries", "rdc", "min_cc",
                 "shared", "course_calls"})
    name = ex.text("name", required=True)
    chapter = ex.text("chapter", required=True)
    if not NAME_PATTERN.match(name):
        raise ManifestError(path, "exercise.name", "must be lower_snake_case")
    if not CHAPTER_PATTERN.match(chapter):
        raise ManifestError(path, "exercise.chapter", "must look like ch01_programming_model")
    if path.parent.name != name or path.stem != name:
        raise ManifestError(path, "exercise.name",
                            f"{name!r} must match the exercise folder and file name "
                            f"({path.parent.name}/{path.name})")
    if path.parent.parent.name != chapter:
        raise ManifestError(path, "exercise.chapter",
                            f"{chapter!r} must match the chapter folder {path.parent.parent.name!r}")
    files = ex.strings("files", required=True)
    if not files:
        raise ManifestError(path, "exercise.files", "must name at least one file")
    for f in files:
        if "/" in f or f.startswith(".") or not f.endswith((".cu", ".cpp", ".cuh", ".h")):
            raise ManifestError(path, "exercise.files",
                                f"{f!r}: plain .cu/.cpp/.cuh/.h file names only, no folders")

    shared = _shared_folder(path, name, ex.text("shared"))

    correctness = _Table(path, "correctness", top.data.get("correctness"),
                         {"points", "timeout_s", "case_timeout_s", "alone", "one_process"})
    sanitizer = _Table(path, "sanitizer", top.data.get("sanitizer", {}),
                       {"tools", "gtest_filter", "tool_filters", "timeout_s", "leak_check"})
    benchmark = _Table(path, "benchmark", top.data.get("benchmark", {}), {"timeout_s"})
    tools = sanitizer.strings("tools", default=("memcheck",), allowed=SANITIZER_TOOLS)
    if "memcheck" not in tools:
        tools = ("memcheck",) + tools  # memcheck runs on every exercise

    raw_perf = data.get("performance", [])
    if not isinstance(raw_perf, list):
        raise ManifestError(path, "performance", "must be an array of tables ([[performance]])")
    performance = []
    for i, item in enumerate(raw_perf):
        t = _Table(path, f"performance[{i}]", item,
                   {"name", "points", "measure", "baseline", "full_at", "zero_at",
                    "description", "hint"})
        perf = Performance(
            name=t.text("name", required=True),
            points=t.number("points", required=True, positive=True),
            measure=t.text("measure", required=True),
            baseline=t.text("baseline", required=True),
            full_at=t.number("full_at", required=True, positive=True),
            zero_at=t.number("zero_at", required=True, minimum=0.0),
            description=t.text("description"),
            hint=t.text("hint"),
        )
        if perf.zero_at >= perf.full_at:
            raise ManifestError(path, f"performance[{i}].zero_at",
                                f"must be below full_at ({perf.zero_at} >= {perf.full_at})")
        if perf.measure == perf.baseline:
            raise ManifestError(path, f"performance[{i}].baseline", "must differ from measure")
        if any(p.name == perf.name for p in performance):
            raise ManifestError(path, f"performance[{i}].name", f"duplicate name {perf.name!r}")
        performance.append(perf)

    exercise = Exercise(
        name=name,
        chapter=chapter,
        title=ex.text("title", required=True),
        summary=ex.text("summary"),
        files=files,
        directory=path.parent,
        manifest=path,
        libraries=ex.strings("libraries", allowed=LIBRARIES),
        rdc=ex.flag("rdc"),
        shared=shared,
        course_calls=_course_calls(path, ex.strings("course_calls")),
        min_cc=ex.number("min_cc", default=7.0, minimum=7.0),
        correctness_points=correctness.number("points", required=True, positive=True),
        test_timeout_s=correctness.number("timeout_s", default=60.0, positive=True),
        case_timeout_s=(correctness.number("case_timeout_s", positive=True)
                        if "case_timeout_s" in correctness.data else None),
        tests_alone=correctness.flag("alone"),
        tests_one_process=correctness.flag("one_process"),
        sanitizer_tools=tools,
        sanitizer_filter=sanitizer.text("gtest_filter", default="*"),
        sanitizer_tool_filters=_tool_filters(path, sanitizer, tools),
        sanitizer_timeout_s=sanitizer.number("timeout_s", default=300.0, positive=True),
        sanitizer_leak_check=sanitizer.flag("leak_check"),
        benchmark_timeout_s=benchmark.number("timeout_s", default=180.0, positive=True),
        performance=tuple(performance),
        technique=_techniques(path, data.get("technique", []), bool(performance)),
        profile_counters=_profile_counters(path, data.get("profile"), bool(performance)),
    )
    if "proof" not in data:
        return exercise
    return replace(exercise, proof=_proof(path, data["proof"], exercise))


def _course_calls(path: Path, names: tuple[str, ...]) -> tuple[str, ...]:
    for name in names:
        if not re.fullmatch(r"[A-Za-z_]\w*(::[A-Za-z_]\w*)*", name):
            raise ManifestError(path, "exercise.course_calls",
                                f"{name!r}: a function name (namespace::name), no parameters")
    return names


def _profile_counters(path: Path, raw: object, has_performance: bool) -> tuple[str, ...]:
    """`[profile] counters`: names of grader/counters.py's registry, each once; only where
    there are [[performance]] measurements to profile."""
    if raw is None:
        return ()
    t = _Table(path, "profile", raw, {"counters"})
    names = t.strings("counters", required=True)
    if not has_performance:
        raise ManifestError(path, "profile", "the exercise has no [[performance]] to profile")
    if not names:
        raise ManifestError(path, "profile.counters", "must name at least one counter")
    for name in names:
        if name not in counters.COUNTERS:
            raise ManifestError(path, "profile.counters",
                                f"unknown counter {name!r} (counters: "
                                f"{', '.join(counters.COUNTERS)})")
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ManifestError(path, "profile.counters", f"{twice!r} is named twice")
    return names


def _technique_rules() -> dict:
    """The rules a [[technique]] entry may name, declared once with their checks in
    grader/stages/technique.py (imported here rather than at the top: the stage imports this
    module)."""
    from grader.stages.technique import RULES
    return RULES


def _techniques(path: Path, raw: object, has_performance: bool) -> tuple[Technique, ...]:
    rules = _technique_rules()
    if not isinstance(raw, list):
        raise ManifestError(path, "technique", "must be an array of tables ([[technique]])")
    out: list[Technique] = []
    for i, item in enumerate(raw):
        where = f"technique[{i}]"
        t = _Table(path, where, item,
                   {"name", "rule", "kernel", "value", "points", "voids", "message", "hint"})
        name = t.text("name", required=True)
        rule = t.text("rule", required=True)
        if rule not in rules:
            raise ManifestError(path, f"{where}.rule",
                                f"unknown rule {rule!r} (rules: {', '.join(rules)})")
        kernel = t.text("kernel")
        if not rules[rule].about_kernels and kernel:
            raise ManifestError(path, f"{where}.kernel",
                                f"{rule} looks at the whole object; no kernel")
        try:
            re.compile(kernel)
        except re.error as error:
            raise ManifestError(path, f"{where}.kernel", f"not a valid regex ({error})") from None
        value: int | tuple[str, ...] | None = None
        if rules[rule].value == "registers":
            number = t.number("value", required=True, positive=True)
            if number != int(number) or number > 255:
                raise ManifestError(path, f"{where}.value",
                                    "must be a whole number of registers, at most 255")
            value = int(number)
        elif rules[rule].value == "libraries":
            value = t.strings("value", required=True, allowed=FORBIDDABLE_LIBRARIES)
            if not value:
                raise ManifestError(path, f"{where}.value", "must name at least one library")
        elif rules[rule].value == "api":
            value = t.strings("value", required=True)
            if not value:
                raise ManifestError(path, f"{where}.value", "must name at least one function")
            for item in value:
                if not API_NAME.match(item):
                    raise ManifestError(path, f"{where}.value",
                                        f"{item!r} is not a function name (alternatives "
                                        "are joined by '|')")
        elif "value" in t.data:
            valued = [name for name, declared in rules.items() if declared.value]
            raise ManifestError(path, f"{where}.value",
                                f"{rule} takes no value (only {', '.join(valued[:-1])} "
                                f"and {valued[-1]} do)")
        voids = t.text("voids")
        if voids and voids not in VOIDABLE:
            raise ManifestError(path, f"{where}.voids",
                                f"unknown value {voids!r} (allowed: {', '.join(VOIDABLE)})")
        if voids == "performance" and not has_performance:
            raise ManifestError(path, f"{where}.voids",
                                "the exercise has no [[performance]] points to void")
        points = t.number("points", default=0.0, minimum=0.0)
        if points == 0 and not voids:
            raise ManifestError(path, f"{where}.points",
                                "must be greater than 0 unless the rule voids other points")
        if any(other.name == name for other in out):
            raise ManifestError(path, f"{where}.name", f"duplicate name {name!r}")
        out.append(Technique(name=name, rule=rule, points=points, kernel=kernel, value=value,
                             voids=voids, message=t.text("message"), hint=t.text("hint")))
    return tuple(out)


def _proof(path: Path, raw: object, ex: Exercise) -> Proof:
    t = _Table(path, "proof", raw, {"teaches", "shown_by", "unprovable"})
    teaches = t.text("teaches", required=True).strip()
    if not teaches:
        raise ManifestError(path, "proof.teaches", "must say what the exercise teaches")
    unprovable = t.text("unprovable").strip()
    shown_by = t.strings("shown_by", required=True)
    if not shown_by and not unprovable:
        raise ManifestError(path, "proof.shown_by",
                            "is empty: name what shows the technique, or say in "
                            "proof.unprovable why nothing can")
    suites: set[str] | None = None   # read only when a test: entry needs them
    for item in shown_by:
        kind, _, target = item.partition(":")
        if kind not in PROOF_KINDS or not target.strip():
            raise ManifestError(path, "proof.shown_by",
                                f"{item!r} must be rule:<technique>, test:<Suite.Case> or "
                                "bench:<performance>")
        if kind == "rule" and target not in {rule.name for rule in ex.technique}:
            raise ManifestError(path, "proof.shown_by",
                                f"{item!r}: no [[technique]] named {target!r} (techniques: "
                                f"{', '.join(rule.name for rule in ex.technique) or 'none'})")
        if kind == "bench" and target not in {p.name for p in ex.performance}:
            raise ManifestError(path, "proof.shown_by",
                                f"{item!r}: no [[performance]] named {target!r} (performance: "
                                f"{', '.join(p.name for p in ex.performance) or 'none'})")
        if kind == "test":
            suite, dot, case = target.partition(".")
            if not dot or not suite or not case or ":" in target or target.startswith("-"):
                raise ManifestError(path, "proof.shown_by",
                                    f"{item!r}: one GoogleTest pattern Suite.Case "
                                    "(Prefix/Suite.Case/*, * and ? allowed), one per entry")
            if suites is None:
                suites = test_suites(ex)
            if not any(fnmatch.fnmatchcase(known, suite) for known in suites):
                raise ManifestError(path, "proof.shown_by",
                                    f"{item!r}: no test suite {suite!r} in "
                                    f"{', '.join(p.name for p in test_sources(ex)) or 'the tests'}"
                                    " (none of TEST, TEST_F, TEST_P, INSTANTIATE_TEST_SUITE_P "
                                    "names it)")
    return Proof(teaches=teaches, shown_by=shown_by, unprovable=unprovable)


# GoogleTest's macros that name a suite: TEST(Suite, Case), TEST_F, TEST_P, the typed forms,
# and INSTANTIATE_TEST_SUITE_P(Prefix, Suite, ...), whose cases run as Prefix/Suite.
_SUITE_MACRO = re.compile(r"\b(?:TYPED_)?TEST(?:_F|_P)?\s*\(\s*([A-Za-z_]\w*)\s*,")
_INSTANTIATION = re.compile(r"\bINSTANTIATE_(?:TYPED_)?TEST_(?:SUITE|CASE)_P\s*\("
                            r"\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*,")
# String literals are matched too, so that a "Small/*" filter does not open a comment.
_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', re.S)


def test_suites(ex: Exercise) -> set[str]:
    """Suite names the exercise's test sources define, as --gtest_filter sees them: Suite for
    TEST/TEST_F, Prefix/Suite for each instantiation of a TEST_P suite (and Suite itself, so
    a pattern may name either). Commented-out tests do not count."""
    suites: set[str] = set()
    for source in test_sources(ex):
        text = _COMMENT_OR_STRING.sub(
            lambda m: m[0] if m[0].startswith('"') else " ",
            source.read_text(encoding="utf-8", errors="replace"))
        suites.update(_SUITE_MACRO.findall(text))
        for prefix, suite in _INSTANTIATION.findall(text):
            suites.update((suite, f"{prefix}/{suite}"))
    return suites


def _shared_folder(path: Path, name: str, shared: str) -> str:
    """Checks `exercise.shared`: a folder of the same chapter, not an exercise, with its
    header; the benchmark defined once."""
    if not shared:
        return ""
    where = "exercise.shared"
    if not NAME_PATTERN.match(shared):
        raise ManifestError(path, where, f"{shared!r} must be a lower_snake_case folder name")
    folder = path.parent.parent / shared
    if not folder.is_dir():
        raise ManifestError(path, where,
                            f"{shared!r}: no folder {folder} in the exercise's chapter")
    if (folder / f"{shared}.toml").exists():
        raise ManifestError(path, where, f"{shared!r} is an exercise (it has {shared}.toml), "
                                         "not a folder of shared course code")
    if not (folder / f"{shared}.h").is_file():
        raise ManifestError(path, where, f"{shared!r}: {folder} has no header {shared}.h")
    if (folder / f"{shared}_bench.cpp").is_file() and \
            (path.parent / f"{name}_bench.cpp").is_file():
        raise ManifestError(path, where, f"both {shared}_bench.cpp and {name}_bench.cpp "
                                         "define the benchmark; keep one")
    return shared


def _shared_names(chapter_dir: Path) -> set[str]:
    """Folders the chapter's manifests name as shared. Unreadable manifests are left to
    discover(), which reports them."""
    names = set()
    for ex_dir in chapter_dir.iterdir():
        try:
            data = tomllib.loads((ex_dir / f"{ex_dir.name}.toml").read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            continue
        exercise = data.get("exercise")
        shared = exercise.get("shared") if isinstance(exercise, dict) else None
        if isinstance(shared, str) and shared:
            names.add(shared)
    return names


def incomplete_folders(root: Path) -> list[Path]:
    """Exercise folders with no manifest: work in progress, skipped by discover(). Folders of
    shared course code (named by a manifest's `shared`) are not exercises and not listed."""
    chapters_dir = Path(root) / "chapters"
    if not chapters_dir.is_dir():
        return []
    out = []
    for chapter_dir in sorted(p for p in chapters_dir.iterdir() if p.is_dir()):
        shared = _shared_names(chapter_dir)
        out += [ex_dir for ex_dir in sorted(chapter_dir.iterdir())
                if ex_dir.is_dir() and ex_dir.name not in shared
                and not (ex_dir / f"{ex_dir.name}.toml").exists()]
    return out


def discover(root: Path) -> list[Exercise]:
    """All exercises under root/chapters, in chapter then folder order. A folder without
    any manifest is skipped (see incomplete_folders); a manifest that is there must be valid."""
    chapters_dir = Path(root) / "chapters"
    if not chapters_dir.is_dir():
        raise GraderError(f"no chapters/ folder under {root}")
    exercises = []
    for chapter_dir in sorted(p for p in chapters_dir.iterdir() if p.is_dir()):
        if not CHAPTER_PATTERN.match(chapter_dir.name):
            raise GraderError(f"{chapter_dir}: chapter folders are named like ch01_programming_model")
        for ex_dir in sorted(p for p in chapter_dir.iterdir() if p.is_dir()):
            manifest = ex_dir / f"{ex_dir.name}.toml"
            if not manifest.exists():
                continue
            exercises.append(load_manifest(manifest))
    seen: dict[str, Exercise] = {}
    for ex in exercises:
        if ex.name in seen:
            raise ManifestError(ex.manifest, "exercise.name",
                                f"{ex.name!r} is also used by {seen[ex.name].manifest}; "
                                "exercise names are unique across the course")
        seen[ex.name] = ex
    return exercises


def select(exercises: list[Exercise], patterns: list[str]) -> list[Exercise]:
    """Exercises matching any pattern: a chapter (ch01 or ch01_programming_model), an exercise
    name, or chapter/name. An unknown pattern is an error that suggests close names."""
    if not patterns:
        return exercises
    chosen: list[Exercise] = []
    for pattern in patterns:
        pattern = pattern.strip().rstrip("/")
        matches = [ex for ex in exercises
                   if pattern in (ex.name, ex.key, ex.chapter, ex.chapter_number)
                   or f"{ex.chapter_number}/{ex.name}" == pattern]
        if not matches:
            import difflib
            names = sorted({ex.name for ex in exercises} | {ex.chapter for ex in exercises}
                           | {ex.chapter_number for ex in exercises})
            close = difflib.get_close_matches(pattern, names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else \
                "; 'python3 -m grader list' shows them all"
            raise GraderError(f"unknown exercise or chapter {pattern!r}{hint}")
        chosen.extend(ex for ex in matches if ex not in chosen)
    order = {ex.key: i for i, ex in enumerate(exercises)}
    return sorted(chosen, key=lambda ex: order[ex.key])


def _course_sources(folder: Path, stem: str) -> list[str]:
    out = []
    for p in sorted(folder.iterdir()):
        if p.suffix in (".cpp", ".cu") and p.stem.startswith(stem + "_") \
                and p.stem not in (stem + "_test", stem + "_bench", stem + CEILINGS_SUFFIX) \
                and not hidden.is_hidden_source(p):
            out.append(p.name)
    return out


def course_sources(ex: Exercise) -> list[str]:
    """Course-owned sources beside the tests: <name>_*.cpp/.cu other than _test, _bench and
    _hidden_test (CPU references, baseline kernels)."""
    return _course_sources(ex.directory, ex.name)


def shared_sources(ex: Exercise) -> list[str]:
    """Course-owned sources of the exercise's shared folder, <shared>_*.cpp/.cu other than
    _test, _bench and _ceilings: compiled once per build, whichever exercises use them."""
    return _course_sources(ex.shared_directory, ex.shared) if ex.shared else []


# <shared>_ceilings.cpp: a shared folder's ceilings program (course::run_ceilings), which
# measures the ceilings its exercises' benchmarks share once per run, without student code.
CEILINGS_SUFFIX = "_ceilings"
# The support library's ceilings program: the copy ceilings ("copy:<bytes>").
COURSE_CEILINGS_PROGRAM = "course_ceilings"


def ceilings_source(ex: Exercise) -> Path | None:
    """The exercise's shared folder's <shared>_ceilings.cpp, where there is one."""
    if not ex.shared:
        return None
    path = ex.shared_directory / f"{ex.shared}{CEILINGS_SUFFIX}.cpp"
    return path if path.is_file() else None


def ceilings_program(ex: Exercise) -> str:
    """The program that measures the ceilings of the exercise's shared folder (built only where
    the folder has a <shared>_ceilings.cpp), "" without a shared folder."""
    return f"{ex.chapter}_{ex.shared}{CEILINGS_SUFFIX}" if ex.shared else ""


def test_sources(ex: Exercise) -> list[Path]:
    """The test binary's own sources: the shared folder's <shared>_test.cpp, then the
    exercise's <name>_test.cpp (extra cases), each where present."""
    out = [ex.shared_directory / f"{ex.shared}_test.cpp"] if ex.shared else []
    out.append(ex.directory / f"{ex.name}_test.cpp")
    return [p for p in out if p.is_file()]


def bench_sources(ex: Exercise) -> list[Path]:
    """The benchmark's source: the shared folder's <shared>_bench.cpp, else <name>_bench.cpp."""
    out = [ex.shared_directory / f"{ex.shared}_bench.cpp"] if ex.shared else []
    out.append(ex.directory / f"{ex.name}_bench.cpp")
    return [p for p in out if p.is_file()][:1]
