"""Every benchmark denominator is the course's: a [[performance]] ratio is measure/baseline, and
a baseline that ran the student's code (the student's own slow version) could be slowed on
purpose to inflate the ratio. So the code that produces each baseline measurement must call no
function the student writes: none declared in the exercise's frozen header <ex>.h that course
code does not define, and not COURSE_EXERCISE (a ladder rung's launcher).

The check is static, on the benchmark's and the course's sources, with no GPU:

* where a baseline is measured: the statement holding a string literal that spells its name
  (the whole name, or a piece joined with `+`, as in "course_device_" + input), or a
  copy_ceiling(bytes) call for "copy"; a literal that initialises a variable brings in the
  statements that use the variable (bank_conflicts' base_name);
* what such a statement runs: every identifier in it (a lambda's body, a launcher passed by
  name), the arguments every call site passes for a parameter of the enclosing function
  (compare_pair's `conflicted`), and the bodies of the course helpers it names, followed
  through the helpers they name in turn.

A baseline the check cannot find fails too, so that a name built in a way it cannot follow
never passes unseen."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pytest

from grader import manifest
from helpers import ROOT, needs_solutions

EXERCISES = manifest.discover(ROOT)
CRITERIA = [(ex, perf) for ex in EXERCISES for perf in ex.performance]

# The launcher a shared folder's benchmark calls for the rung it is compiled for.
STUDENT_MACRO = "COURSE_EXERCISE"
# The rung's measurement name, a string literal the build defines.
NAME_MACRO = "COURSE_EXERCISE_NAME"
# Course calls that name their measurement themselves when given no name.
DEFAULT_NAMES = {"copy_ceiling": "copy"}
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype",
           "static_assert", "alignof", "noexcept", "__launch_bounds__"}
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# What ends a function's or a lambda's head before its body: the parameter list's ')', then
# qualifiers and a trailing return type.
SIGNATURE_END = re.compile(r"\)\s*(?:(?:const|noexcept|mutable|override|final)\s*)*"
                           r"(?:->\s*[\w:<>,\s*&]+)?$")


# --- reading C++ just well enough -------------------------------------------------------------

def strip_comments(text: str) -> str:
    """The text with comments and preprocessor lines blanked (same length, newlines kept)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
        else:
            i += 1
    lines = "".join(out).split("\n")
    continued = False
    for k, line in enumerate(lines):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            lines[k] = " " * len(line)
    return "\n".join(lines)


def mask_literals(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """The text with the inside of every string and character literal blanked, and the string
    literals found: (start, end, value), start at the opening quote."""
    out = list(text)
    literals = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                literals.append((i, j + 1, text[i + 1:j]))
            out[i + 1:j] = " " * (j - i - 1)
            i = j + 1
        else:
            i += 1
    return "".join(out), literals


@dataclass(eq=False)  # one file read once: compared and hashed by identity
class Source:
    """One source file, read: brackets matched, blocks told from initialiser lists."""
    path: Path
    text: str       # comments blanked, literals kept
    masked: str     # literals blanked too: what structure and identifiers are read from
    literals: list[tuple[int, int, str]]
    pairs: dict[int, int] = field(default_factory=dict)  # open -> close, every bracket kind
    blocks: set[int] = field(default_factory=set)        # opening braces of code blocks

    @classmethod
    def read(cls, path: Path, text: str | None = None) -> "Source":
        clean = strip_comments(path.read_text() if text is None else text)
        masked, literals = mask_literals(clean)
        source = cls(path, clean, masked, literals)
        stack = []
        for i, c in enumerate(masked):
            if c in "([{":
                stack.append(i)
            elif c in ")]}" and stack:
                source.pairs[stack.pop()] = i
        source.blocks = {o for o in source.pairs if masked[o] == "{" and source._is_block(o)}
        return source

    def _is_block(self, brace: int) -> bool:
        """A code block (body of a function, lambda, loop, type or namespace, or a bare block)
        rather than a braced initialiser."""
        before = self.masked[max(0, brace - 400):brace].rstrip()  # enough for a signature
        if not before or before[-1] in ";}]" or SIGNATURE_END.search(before):
            return True
        if re.search(r"\b(?:else|do|try)$", before):
            return True
        return bool(re.search(r"\b(?:namespace|struct|class|enum|union)\b[^;{}()=]*$", before))

    def line(self, position: int) -> int:
        return self.text.count("\n", 0, position) + 1

    def enclosing_blocks(self, position: int) -> list[int]:
        """The code blocks around `position`, innermost first."""
        around = [o for o in self.blocks if o < position < self.pairs[o]]
        return sorted(around, reverse=True)

    def statement(self, position: int) -> tuple[int, int]:
        """The span of the statement holding `position`, within its innermost code block."""
        blocks = self.enclosing_blocks(position)
        start, end = (blocks[0] + 1, self.pairs[blocks[0]]) if blocks else (0, len(self.masked))
        i, begun = start, start
        while i < end:
            if i in self.pairs:  # a bracketed part, read as one piece of the statement
                close = self.pairs[i]
                if i in self.blocks:  # a body (if, for, a function) ends its statement
                    if close >= position:
                        return begun, close + 1
                    begun = close + 1
                i = close + 1
                continue
            if self.masked[i] == ";":
                if i >= position:
                    return begun, i + 1
                begun = i + 1
            i += 1
        return begun, end

    def identifiers(self, start: int, end: int) -> list[tuple[int, str]]:
        """Unqualified identifiers in [start, end): not members (a.b, a->b) nor qualified
        (ns::b), with their positions."""
        out = []
        for m in IDENTIFIER.finditer(self.masked, start, end):
            before = self.masked[max(0, m.start() - 2):m.start()]
            if before.endswith(".") or before.endswith("->") or before.endswith("::"):
                continue
            if m.start() > 0 and (self.masked[m.start() - 1].isalnum()
                                  or self.masked[m.start() - 1] == "_"):
                continue
            out.append((m.start(), m.group()))
        return out


def split_top_level(text: str, angle: bool) -> list[str]:
    """Comma-separated parts of a parameter or argument list, commas inside brackets kept
    (and inside <...> for parameter lists, whose templates hold commas)."""
    parts, depth, current = [], 0, []
    opening, closing = ("([{<", ")]}>") if angle else ("([{", ")]}")
    for c in text:
        if c in opening:
            depth += 1
        elif c in closing:
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(c)
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


def parameter_name(parameter: str) -> str:
    """The name a parameter declares: `const Launcher& conflicted` -> conflicted,
    `void (*call)(const float*, int)` -> call, `int n = 4` -> n."""
    pointer = re.search(r"\(\s*[*&]\s*(\w+)\s*\)", parameter)
    if pointer:
        return pointer.group(1)
    declaration = split_top_level(parameter, angle=True)[0].split("=")[0]
    names = IDENTIFIER.findall(declaration)
    return names[-1] if names else ""


@dataclass
class Function:
    """A function or a lambda defined in course code: where its parameters and body are. A
    lambda not bound to a name has the name "": its parameters shadow the enclosing ones."""
    name: str
    source: Source
    parameters: list[str]
    body: tuple[int, int]  # the span of its braces
    parameter_list: int    # where its '(' is, so that a search for calls can pass it by
    # The function body it is defined in (a lambda's), None at namespace level: two lambdas of
    # one name in two functions (atomic_scopes' `measure`) are told apart by it.
    scope: tuple[int, int] | None = None

    def visible_at(self, source: Source, position: int) -> bool:
        return self.scope is None or (source is self.source
                                      and self.scope[0] < position < self.scope[1])


def functions_in(source: Source) -> list[Function]:
    """Function definitions (`ret name(params) {`, `Class::name(...) : init {`) and lambdas
    bound to a name (`auto name = [&](params) {`)."""
    out = []
    opened = {close: open_ for open_, close in source.pairs.items()}
    text = source.masked
    for brace in source.blocks:
        window = max(0, brace - 400)
        m = SIGNATURE_END.search(text[window:brace].rstrip())
        open_ = opened.get(window + m.start()) if m else None
        if open_ is None or text[open_] != "(":
            continue
        params = [parameter_name(p) for p in
                  split_top_level(text[open_ + 1:source.pairs[open_]], angle=True)]
        params = [p for p in params if p and p != "void"]
        body = (brace, source.pairs[brace])
        head = text[max(0, open_ - 400):open_].rstrip()
        if head.endswith("]"):  # a lambda: named when assigned to a variable
            intro = opened.get(open_ - (len(text[max(0, open_ - 400):open_]) - len(head)) - 1)
            bound = re.search(r"(\w+)\s*=\s*$", text[max(0, intro - 200):intro]) \
                if intro is not None else None
            out.append(Function(bound.group(1) if bound else "", source, params, body, open_))
            continue
        named = re.search(r"([A-Za-z_][\w:]*)\s*$", head)
        if not named or named.group(1).split("::")[-1] in CONTROL:
            continue
        # The last entry of a constructor's initialiser list (`X::X(a) : b_(a) {`), not a
        # function: the constructor is not followed.
        if re.search(r"[,:]\s*[A-Za-z_]\w*$", head) and re.search(r"\)\s*:[^;{}]*$", head):
            continue
        out.append(Function(named.group(1).split("::")[-1], source, params, body, open_))
    bodies = sorted(f.body for f in out)
    for f in out:
        around = [b for b in bodies if b[0] < f.body[0] and f.body[1] < b[1]]
        f.scope = around[-1] if around else None
    return out


def top_level_statements(source: Source) -> list[tuple[str, bool]]:
    """Each top-level statement's text (namespaces are looked into), and whether it had a
    body: `void f(int);` is (..., False), `inline int g() {...}` is (..., True)."""
    out, current = [], []
    i, n = 0, len(source.masked)
    while i < n:
        c = source.masked[i]
        if i in source.blocks:
            text = "".join(current)
            if re.search(r"\b(?:namespace)\b[^;{}]*$|extern\s*\"C\"\s*$", text):
                current = []
                i += 1  # look inside; its closing brace is skipped below
                continue
            out.append((text, True))
            current = []
            i = source.pairs[i] + 1
            continue
        if c == "}":
            current = []
        elif c == ";":
            out.append(("".join(current), False))
            current = []
        else:
            current.append(c)
        i += 1
    return out


def declared_functions(header: Path) -> tuple[set[str], set[str]]:
    """The functions a header declares without defining them, and those it defines."""
    declared, defined = set(), set()
    for text, has_body in top_level_statements(Source.read(header)):
        m = re.search(r"([A-Za-z_]\w*)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*"
                      r"(?:const|noexcept|override|final|\s)*$", text)
        if not m or m.group(1) in CONTROL or "=" in text[:m.start()]:
            continue
        (defined if has_body else declared).add(m.group(1))
    return declared, defined


# --- one exercise --------------------------------------------------------------------------------

@dataclass
class Violation:
    where: str  # file:line of the statement that measures the baseline
    what: str   # the student's function reached, and how


@dataclass
class Exercise:
    """What the check knows about one exercise: its benchmark and course sources, and the
    names of the functions the student writes."""
    name: str
    sources: list[Source]
    student: set[str]

    @classmethod
    def of(cls, ex: manifest.Exercise) -> "Exercise":
        course = [Source.read(ex.directory / f) for f in manifest.course_sources(ex)]
        if ex.shared:
            course += [Source.read(ex.shared_directory / f) for f in manifest.shared_sources(ex)]
        declared, _ = declared_functions(ex.directory / f"{ex.name}.h")
        # A header may declare course code too (occupancy's streaming_scale).
        course_defined = {f.name for source in course for f in functions_in(source)}
        student = (declared - course_defined) | ({STUDENT_MACRO} if ex.shared else set())
        bench = [Source.read(p) for p in manifest.bench_sources(ex)]
        return cls(ex.name, bench + course, student)

    @cached_property
    def functions(self) -> dict[str, list[Function]]:
        out: dict[str, list[Function]] = {}
        for source in self.sources:
            for f in functions_in(source):
                out.setdefault(f.name, []).append(f)
        return out

    def producers(self, measurement: str) -> list[tuple[Source, tuple[int, int]]]:
        """The statements that measure `measurement` (see the module's docstring)."""
        found = []
        for source in self.sources:
            for start, end, value in self.named_pieces(source):
                after = source.masked[end:].lstrip()[:1]
                before = source.masked[:start].rstrip()[-1:]
                whole = value == measurement
                # The rung's name is the stem of all its measurements (<rung>_b256).
                stem = source.masked[start:end] == NAME_MACRO
                prefix = value and measurement.startswith(value) and (after == "+" or stem)
                suffix = value and measurement.endswith(value) and before == "+"
                if whole or prefix or suffix:
                    found.append((source, source.statement(start)))
            if measurement in DEFAULT_NAMES.values():
                for call, name in DEFAULT_NAMES.items():
                    for m in re.finditer(rf"\b{call}\s*\(", source.masked):
                        open_ = m.end() - 1
                        args = split_top_level(source.masked[open_ + 1:source.pairs[open_]],
                                               angle=False)
                        if name == measurement and len(args) == 1:
                            found.append((source, source.statement(m.start())))
        # A name kept in a variable: the statements that use the variable measure it.
        for source, (start, end) in list(found):
            declared = re.match(r"[^=;(]*?\b([A-Za-z_]\w*)\s*=(?!=)", source.masked[start:end])
            if not declared:
                continue
            variable = declared.group(1)
            blocks = source.enclosing_blocks(start)
            scope = (blocks[0], source.pairs[blocks[0]]) if blocks else (0, len(source.masked))
            for position, name in source.identifiers(*scope):
                if name == variable and not start <= position < end:
                    found.append((source, source.statement(position)))
        return list(dict.fromkeys((s, span) for s, span in found))

    def named_pieces(self, source: Source):
        """String literals, and the rung's name macro read as the literal it stands for."""
        yield from source.literals
        for m in re.finditer(rf"\b{NAME_MACRO}\b", source.masked):
            yield m.start(), m.end(), self.name

    def violations(self, measurement: str) -> tuple[int, list[Violation]]:
        """How many statements measure `measurement`, and each student function they reach."""
        producers = self.producers(measurement)
        functions = self.functions
        out = []
        for source, (start, end) in producers:
            first = start + len(source.masked[start:end]) - len(source.masked[start:end].lstrip())
            where = f"{source.path.name}:{source.line(first)}"
            for position, name in source.identifiers(start, end):
                if name in self.student:
                    out.append(Violation(where, f"calls {name}"))
                    continue
                for argument, caller in self.arguments_for(source, position, name, functions):
                    for at, passed in caller.identifiers(*argument):
                        if passed in self.student:
                            out.append(Violation(where, f"{name} is {passed} at "
                                                        f"{caller.path.name}:"
                                                        f"{caller.line(argument[0])}"))
                        out += self.reached(where, caller, at, passed, functions, set())
                out += self.reached(where, source, position, name, functions, set())
        return len(producers), out

    def arguments_for(self, source: Source, position: int, name: str,
                      functions: dict[str, list[Function]]):
        """When `name` at `position` is a parameter of the function around it: what every call
        of that function passes for it, as (span, source)."""
        for brace in source.enclosing_blocks(position):
            owner = next((f for fs in functions.values() for f in fs
                          if f.source is source and f.body[0] == brace), None)
            if owner is None or name not in owner.parameters:
                continue
            if not owner.name:  # an unnamed lambda's parameter: nothing to follow
                return
            index = owner.parameters.index(name)
            for caller in self.sources:
                for m in re.finditer(rf"(?<![\w.>:]){re.escape(owner.name)}\s*\(",
                                     caller.masked):
                    open_ = m.end() - 1
                    if caller is source and open_ == owner.parameter_list:
                        continue
                    inside = caller.masked[open_ + 1:caller.pairs[open_]]
                    args = split_top_level(inside, angle=False)
                    if index < len(args):
                        offset = open_ + 1 + sum(len(a) + 1 for a in args[:index])
                        yield (offset, offset + len(args[index])), caller
            return

    def reached(self, where: str, source: Source, position: int, name: str,
                functions: dict[str, list[Function]], seen: set[int]) -> list[Violation]:
        """The student's functions that the course helper `name`, as seen from `position`,
        calls, directly or through other helpers."""
        out = []
        for f in functions.get(name, []):
            if id(f) in seen or not f.visible_at(source, position):
                continue
            seen.add(id(f))
            for at, inner in f.source.identifiers(*f.body):
                if inner in self.student:
                    out.append(Violation(where, f"{name} ({f.source.path.name}:"
                                                f"{f.source.line(f.body[0])}) calls {inner}"))
                else:
                    out += self.reached(where, f.source, at, inner, functions, seen)
        return out


# --- the course ----------------------------------------------------------------------------------

@pytest.mark.parametrize("ex,perf", CRITERIA, ids=[f"{e.name}-{p.name}" for e, p in CRITERIA])
def test_every_baseline_is_measured_by_course_code(ex, perf):
    found, violations = Exercise.of(ex).violations(perf.baseline)
    assert found, (f"{ex.name}: cannot find where the benchmark measures {perf.baseline!r}; "
                   "name it with a string literal (or pieces of one joined with +) that "
                   "tests/test_denominators.py can follow")
    assert not violations, (
        f"{ex.name}'s criterion {perf.name!r} divides by {perf.baseline!r}, which runs the "
        "student's code, so a slower student version would raise the ratio: "
        + "; ".join(f"{v.where}: {v.what}" for v in violations)
        + ". Time the course's own version as the baseline (<ex>_baseline.cu).")


@pytest.mark.parametrize("ex", [e for e in EXERCISES if e.performance], ids=lambda e: e.name)
def test_the_student_functions_are_read_from_the_header(ex):
    student = Exercise.of(ex).student - {STUDENT_MACRO}
    assert student, f"{ex.name}.h declares no function for the student"
    assert ex.name in student or not ex.shared


@needs_solutions
@pytest.mark.parametrize("ex", [e for e in EXERCISES if e.performance], ids=lambda e: e.name)
def test_the_student_functions_are_the_solution_s(ex):
    """What the check takes for the student's functions is what the solution defines: the
    header reading neither misses a launcher nor counts a course function."""
    student = Exercise.of(ex).student - {STUDENT_MACRO}
    defined = set()
    for f in ex.files:
        defined |= {fn.name for fn in functions_in(Source.read(ROOT / "solutions" / ex.chapter / f))}
        defined |= declared_functions(ROOT / "solutions" / ex.chapter / f)[1]
    assert student <= defined, f"not defined by the solution: {sorted(student - defined)}"


# The check sees the student's code where it is: each of these measures (never a baseline)
# reaches it by another path, so a baseline built the same way would fail.
STUDENT_MEASURES = [
    ("zero_copy_unified", "managed_prefetched", "saxpy_managed_prefetched"),  # passed by name
    ("l2_persistence", "with_window", "enable_persistence"),                 # in a lambda
    ("bank_conflicts", "bank_conflicts_rect", "bank_conflicts_rect"),  # through a parameter
    ("histogram", "histogram_uniform_256", "histogram"),               # "histogram_" + label
    ("reduce_v2_neighbored_less_divergence", "reduce_v2_neighbored_less_divergence",
     STUDENT_MACRO),                                                   # a macro in a variable
    ("reduce_v6_unroll_last_warp", "reduce_v6_unroll_last_warp_b1024", STUDENT_MACRO),
    ("matmul_v1_naive", "matmul_v1_naive", STUDENT_MACRO),
    ("stream_priorities", "prioritised", "submit_urgent"),
]


@pytest.mark.parametrize("name,measure,function", STUDENT_MEASURES,
                         ids=[m[1] for m in STUDENT_MEASURES])
def test_the_check_sees_the_student_s_code_in_a_measure(name, measure, function):
    ex = next(e for e in EXERCISES if e.name == name)
    found, violations = Exercise.of(ex).violations(measure)
    assert found
    assert any(function in v.what for v in violations), violations


# --- the check on benchmarks written to fail it ----------------------------------------------------

HEADER = """// frozen
#pragma once
#include <cuda_runtime.h>
inline int course_helper(int x) { return x; }
void slow_version(const float* in, float* out, int n, cudaStream_t stream);
void fast_version(const float* in, float* out, int n, cudaStream_t stream);
void course_provided(const float* in, float* out, int n, cudaStream_t stream);
"""

BASELINE = """#include "demo.h"
void course_provided(const float* in, float* out, int n, cudaStream_t stream) {}
void course_slow(const float* in, float* out, int n, cudaStream_t stream) {}
"""


def demo(tmp_path: Path, bench: str, baseline: str = BASELINE) -> Exercise:
    (tmp_path / "demo.h").write_text(HEADER)
    (tmp_path / "demo_bench.cpp").write_text(bench)
    (tmp_path / "demo_baseline.cu").write_text(baseline)
    declared, _ = declared_functions(tmp_path / "demo.h")
    sources = [Source.read(tmp_path / "demo_bench.cpp"), Source.read(tmp_path / "demo_baseline.cu")]
    course = {f.name for f in functions_in(sources[1])}
    return Exercise("demo", sources, declared - course)


def test_the_demo_header_names_the_student_s_functions(tmp_path):
    assert demo(tmp_path, "").student == {"slow_version", "fast_version"}


def test_a_baseline_that_times_the_student_s_slow_version_fails(tmp_path):
    # zero_copy_unified's benchmark before the course timed its own on-demand call.
    ex = demo(tmp_path, """
void course::run_benchmark(course::Benchmark& bench) {
  auto measure = [&](const char* name, void (*call)(const float*, float*, int, cudaStream_t)) {
    bench.time(name, 1.0, course::Unit::GBps, [&](cudaStream_t s) { call(a, b, n, s); });
  };
  measure("slow", slow_version);
  measure("fast", fast_version);
}
""")
    found, violations = ex.violations("slow")
    assert found == 1 and [v.what for v in violations] == ["calls slow_version"]
    assert violations[0].where == "demo_bench.cpp:6"


def test_a_baseline_in_a_lambda_and_one_pieced_together_fail(tmp_path):
    ex = demo(tmp_path, """
void course::run_benchmark(course::Benchmark& bench) {
  for (const int size : {1, 2}) {
    const std::string suffix = "_" + std::to_string(size);
    bench.time("slow" + suffix, 1.0, course::Unit::GBps,
               [&](cudaStream_t s) { slow_version(a, b, size, s); }, io);
  }
}
""")
    assert [v.what for v in ex.violations("slow_2")[1]] == ["calls slow_version"]


def test_a_baseline_reached_through_a_parameter_fails(tmp_path):
    ex = demo(tmp_path, """
namespace {
void compare_pair(course::Benchmark& bench, const std::string& label, const Launcher& slow,
                  const Launcher& fast) {
  const std::string base_name = label + "_slow";
  bench.time(base_name, 1.0, course::Unit::GBps, [&](cudaStream_t s) { slow(a, b, 1, s); }, io);
  bench.time(label, 1.0, course::Unit::GBps, [&](cudaStream_t s) { fast(a, b, 1, s); }, io);
}
}  // namespace
void course::run_benchmark(course::Benchmark& bench) {
  compare_pair(bench, "one", course_slow, fast_version);
  compare_pair(bench, "two", slow_version, fast_version);
}
""")
    found, violations = ex.violations("two_slow")
    assert found == 2  # the name's declaration and the call that times it
    assert [v.what for v in violations] == ["slow is slow_version at demo_bench.cpp:12"]
    assert ex.violations("one")[1]  # the student's fast version, through `fast`


def test_a_course_wrapper_around_the_student_s_code_fails(tmp_path):
    ex = demo(tmp_path, """
void course::run_benchmark(course::Benchmark& bench) {
  bench.time("slow", 1.0, course::Unit::GBps, [&](cudaStream_t s) { course_slow(a, b, 1, s); });
}
""", BASELINE.replace("course_slow(const float* in, float* out, int n, cudaStream_t stream) {}",
                      "course_slow(const float* in, float* out, int n, cudaStream_t stream) {\n"
                      "  slow_version(in, out, n, stream);\n}"))
    assert [v.what for v in ex.violations("slow")[1]] == \
        ["course_slow (demo_baseline.cu:3) calls slow_version"]


def test_course_code_passes_even_where_the_header_declares_it(tmp_path):
    # occupancy's streaming_scale: declared in the frozen header, defined by the course.
    ex = demo(tmp_path, """
void course::run_benchmark(course::Benchmark& bench) {
  bench.copy_ceiling(bytes);
  bench.time("course", 1.0, course::Unit::GBps,
             [&](cudaStream_t s) { course_provided(a, b, course_helper(1), s); });
  bench.time("mine", 1.0, course::Unit::GBps, [&](cudaStream_t s) { fast_version(a, b, 1, s); });
}
""")
    assert ex.violations("course") == (1, [])
    assert ex.violations("copy") == (1, [])
    assert ex.violations("missing") == (0, [])


def test_a_ladder_baseline_timing_the_rung_fails(tmp_path):
    ex = demo(tmp_path, """
void course::run_benchmark(course::Benchmark& bench) {
  bench.shared("ladder/key", "ceiling", 1.0, course::Unit::GBps,
               [&](cudaStream_t s) { COURSE_EXERCISE(a, b, 1, s); }, io);
}
""")
    ex.student.add(STUDENT_MACRO)
    assert [v.what for v in ex.violations("ceiling")[1]] == [f"calls {STUDENT_MACRO}"]
