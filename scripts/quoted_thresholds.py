#!/usr/bin/env python3
"""The numbers the chapter READMEs quote about scoring, generated from the manifests and
checked against them (tests/test_quoted_numbers.py runs the check in CI).

    python3 scripts/quoted_thresholds.py           # rewrite the generated tables
    python3 scripts/quoted_thresholds.py --check   # exit 1 naming every stale table or quote

Generated tables. In a chapter README, the lines between

    <!-- points:begin ... -->        and  <!-- points:end -->
    <!-- thresholds:begin ... -->    and  <!-- thresholds:end -->
    <!-- counters:begin ... -->      and  <!-- counters:end -->

are written by this script from the chapter's manifests (chapters/<chapter>/*/<name>.toml):
each exercise's file and points (correctness, technique, performance, total), then each
performance criterion (measure / baseline, points, full_at, zero_at) and each technique rule
(what it checks, points, what a failure voids). Never edit them by hand: change the manifest
and run the script.

Quotes in prose. Anywhere else, a number about scoring is written behind a quote marker,
`<!-- q:EXERCISE.KEY -->VALUE`, which renders as VALUE and which the check compares with the
manifest. KEY is one of
    correctness | technique | performance | total        (points)
    CRITERION.full_at | CRITERION.zero_at | CRITERION.points   ([[performance]] by name)
    RULE.points | RULE.value                             ([[technique]] by name)
    correctness.timeout_s | case_timeout_s | min_cc
e.g. `full marks at <!-- q:occupancy.vs_best_of_sweep.full_at -->0.90 of the sweep's best`.

What the check flags (the rules of docs/measurements/README.md, "Numbers in the notes"):
- in chapter READMEs, outside generated tables and quote markers: a number after "full
  marks", "no marks", "full points", "target", "threshold", "full_at" or "zero_at"; a number of
  points; a ratio written as "0.92x" or "19 times"; a count of test cases; a threshold table
  ("full marks at" in a table header); a path under build/grade/solutions-* (students have no
  solutions: examples point at their own build folder);
- in the other notes (README.md, docs/notes_map.md, docs/architecture.md and its notes under
  docs/architecture/, docs/instructors.md, docs/chNN_*/README.md): a number after those threshold
  words in a paragraph (or table row) that names an exercise whose manifest has no such
  threshold;
- everywhere: a quote marker whose key is unknown or whose value differs from the manifest.
Dated measurement logs (docs/measurements/, docs/grading_time.md) record thresholds as they
stood when they were measured, and are not checked.

Sources of what NVIDIA's documents say. In every note (the chapter READMEs, README.md and each
page under docs/ but the dated logs), a sentence that names a guide ("the guide says", "the
Programming Guide", "the CUDA C++ Programming Guide states", "the Best Practices Guide's
figures", ...) or says what another NVIDIA reference states ("the Runtime API reference says",
"the PTX ISA defines", ...) must carry its source in the same sentence: a link to the page
(`[text](https://...)` or `<https://...>`), or a reference to the page's Sources list (a link to
`#sources`, or the word "Sources", as in "([Sources](#sources))"). The Sources section itself,
headings, code blocks and inline code are not checked.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grader.manifest import Exercise, discover  # noqa: E402

BLOCKS = ("points", "thresholds", "counters")
GENERATED_NOTE = "generated from the manifests by scripts/quoted_thresholds.py; do not edit"
# Notes checked leniently (a threshold quoted beside an exercise's name must be that
# exercise's); chapter READMEs are checked strictly.
OTHER_NOTES = ("README.md", "docs/notes_map.md", "docs/architecture.md", "docs/instructors.md")
# Every note of the architecture map is checked too, whatever notes it grows.
ARCHITECTURE_NOTES = "docs/architecture/*.md"

_BEGIN = re.compile(r"^<!--\s*(?P<name>[a-z]+):begin\b[^>]*-->\s*$")
_END = re.compile(r"^<!--\s*(?P<name>[a-z]+):end\s*-->\s*$")
NUMBER = r"\d+(?:[.,]\d+)*"
QUOTE = re.compile(r"<!--\s*q:(?P<exercise>[a-z0-9_]+)\.(?P<key>[a-z0-9_.]+)\s*-->"
                   rf"(?P<value>-?{NUMBER})(?P<suffix>x?)")
# A threshold word, then at most a few words, then the number it quotes.
_FULL_WORDS = r"full[ -]marks?|full[ -]points?|full_at|targets?|thresholds?"
_ZERO_WORDS = r"no[ -]marks?|no[ -]points?|zero[ -]points?|zero_at|none at"
THRESHOLD = re.compile(rf"\b(?P<word>{_FULL_WORDS}|{_ZERO_WORDS})\b"
                       rf"(?P<gap>(?:[^\d|.;:\n]|\.(?!\s)){{0,40}}?)(?P<number>{NUMBER})(?:x|×)?(?![\w^])",
                       re.IGNORECASE)
POINTS = re.compile(rf"(?<![\w.^]){NUMBER}(?:\s*\+\s*{NUMBER})*\s+(?:points?\b|pts\b)"
                    rf"|\bworth\s+{NUMBER}\b", re.IGNORECASE)
# "0.92x", "2×", "19 times"; not "8192 x 8192" or "32x32" (shapes).
RATIO = re.compile(rf"(?<![\w.^]){NUMBER}(?:x|×)(?![\w(])|(?<![\w.^]){NUMBER}\s+times\b")
CASES = re.compile(rf"(?<![\w.^]){NUMBER}\s+(?:of\s+{NUMBER}\s+)?(?:test\s+)?cases\b",
                   re.IGNORECASE)
# A table with a threshold column: a cell that is only "full marks at" (or the like).
THRESHOLD_TABLE = re.compile(r"^\s*\|.*\|\s*`?(full marks at|no marks at|full_at|zero_at)`?\s*\|",
                             re.IGNORECASE)
SOLUTIONS_BUILD = re.compile(r"build/grade/solutions-")

RULE_WORDS = {
    "uses_constant_memory": "reads `__constant__` data (constant bank 3)",
    "uses_shared_memory": "uses shared memory",
    "uses_shuffle": "uses warp shuffles (`SHFL`)",
    "uses_warp_vote": "votes on a predicate (`VOTE`: `__ballot_sync`, `__any_sync`, `__all_sync`)",
    "uses_readonly_path": "loads through the read-only path (`LDG...CONSTANT`) or a texture",
    "uses_texture": "fetches through a texture object",
    "uses_vector_loads": "has 16-byte global loads (`LDG.E.128`)",
    "uses_async_copy": "copies global memory into shared memory asynchronously (`LDGSTS`: "
                       "`cp.async`)",
    "uses_distributed_shared_memory": "reaches other blocks' shared memory "
                                      "(`cluster.map_shared_rank`) between two "
                                      "`cluster.sync()`",
    "no_local_memory": "uses no local memory (no spills, no local arrays)",
    "max_registers": "uses at most {value} registers per thread",
    "uses_device_launch": "launches kernels from the device",
    "uses_memory_fence": "has a device- or system-scope fence between a store and the atomic "
                         "that publishes it",
    "uses_system_atomics": "has a system-scope atomic on global memory",
    "waits_on_grid_dependency": "waits on the previous kernel (`ACQBULK`: "
                                "`cudaGridDependencySynchronize()`)",
    "no_library_calls": "calls nothing from {value}",
    "calls_api": "calls {value}",
    "avoids_api": "calls none of {value}",
}
VOIDS_WORDS = {"": "its own points", "performance": "its points and the performance points",
               "all": "every point of the exercise"}


# ---------------------------------------------------------------------------------------------
# Generated tables


def fmt(value: float) -> str:
    """A manifest number as the tables print it: 40, 0.9, 0.065."""
    value = float(value)
    if value == int(value):
        return str(int(value))
    return f"{value:g}"


def _value_words(value) -> str:
    if isinstance(value, tuple):
        return ", ".join(" or ".join(f"`{alt}`" for alt in item.split("|")) for item in value)
    return fmt(value) if value is not None else ""


def chapter_exercises(exercises: list[Exercise], chapter: str) -> list[Exercise]:
    return [ex for ex in exercises if ex.chapter == chapter]


def render_points(exercises: list[Exercise]) -> list[str]:
    lines = ["| exercise | file to edit | correctness | technique | performance | total |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for ex in exercises:
        technique = sum(t.points for t in ex.technique)
        performance = sum(p.points for p in ex.performance)
        lines.append(f"| `{ex.name}` | {', '.join(f'`{f}`' for f in ex.files)} | "
                     f"{fmt(ex.correctness_points)} | {fmt(technique)} | {fmt(performance)} | "
                     f"{fmt(ex.max_points)} |")
    return lines


def render_thresholds(exercises: list[Exercise]) -> list[str]:
    lines: list[str] = []
    scored = [(ex, p) for ex in exercises for p in ex.performance]
    if scored:
        lines += ["| exercise | criterion | ratio (measure / baseline) | points | full marks at "
                  "| no marks at |",
                  "| --- | --- | --- | ---: | ---: | ---: |"]
        lines += [f"| `{ex.name}` | `{p.name}` | `{p.measure}` / `{p.baseline}` | "
                  f"{fmt(p.points)} | {fmt(p.full_at)} | {fmt(p.zero_at)} |"
                  for ex, p in scored]
    else:
        lines.append("No exercise of this chapter is scored on performance.")
    rules = [(ex, t) for ex in exercises for t in ex.technique]
    if rules:
        lines += ["", "| exercise | technique rule | met when the compiled code | points "
                  "| a failure costs |",
                  "| --- | --- | --- | ---: | --- |"]
        for ex, t in rules:
            words = RULE_WORDS.get(t.rule, f"`{t.rule}`").format(value=_value_words(t.value))
            lines.append(f"| `{ex.name}` | `{t.name}` | {words} | {fmt(t.points)} | "
                         f"{VOIDS_WORDS.get(t.voids, t.voids)} |")
    return lines


def _calibrations(root: Path) -> list[dict]:
    """The calibration files of calibrations/ that hold profiled reference counters, by GPU."""
    out = []
    for path in sorted((root / "calibrations").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(data, dict) and data.get("profile"):
            out.append(data)
    return out


def render_counters(exercises: list[Exercise], root: Path | None = None) -> list[str]:
    """What `grade --profile` shows for each exercise: its counters, which way is better, the
    reference solution's value on each calibrated GPU, and what to try when yours is worse."""
    from grader import counters
    rows = [(ex, name) for ex in exercises for name in ex.profile_counters]
    if not rows:
        return ["No exercise of this chapter declares counters."]
    gpus = _calibrations(root or ROOT)
    dates = [g.get("profile_measured_at") or g.get("measured_at") or "undated" for g in gpus]
    head = ["exercise", "counter", "better"] \
        + [f"solution on {g['gpu']['name']} ({date})" for g, date in zip(gpus, dates)] \
        + ["when yours is worse"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * len(head)) + " |"]
    for ex, name in rows:
        counter = counters.COUNTERS[name]
        cells = [f"`{ex.name}`", f"{counter.title} ({counter.unit})", counter.better]
        for g in gpus:
            measured = g["profile"].get(ex.name, {})
            values = [m[name] for m in measured.values() if m.get(name) is not None]
            cells.append(", ".join(counters.number(v) for v in values) or "not measured")
        cells.append(counter.hint)
        lines.append("| " + " | ".join(cells) + " |")
    return lines


RENDERERS = {"points": render_points, "thresholds": render_thresholds,
             "counters": render_counters}


def _blocks(lines: list[str]) -> list[tuple[str, int, int]]:
    """(name, begin line, end line) of every generated block; raises on unbalanced markers."""
    out, open_name, open_at = [], None, -1
    for i, line in enumerate(lines):
        begin, end = _BEGIN.match(line), _END.match(line)
        if begin and begin["name"] in BLOCKS:
            if open_name is not None:
                raise ValueError(f"line {i + 1}: {begin['name']}:begin inside {open_name}")
            open_name, open_at = begin["name"], i
        elif end and end["name"] in BLOCKS:
            if end["name"] != open_name:
                raise ValueError(f"line {i + 1}: {end['name']}:end without its begin")
            out.append((open_name, open_at, i))
            open_name = None
    if open_name is not None:
        raise ValueError(f"line {open_at + 1}: {open_name}:begin without its end")
    return out


def regenerate(text: str, exercises: list[Exercise]) -> str:
    """The text with every generated block rewritten from these exercises."""
    lines = text.split("\n")
    for name, begin, end in reversed(_blocks(lines)):
        body = RENDERERS[name](exercises)
        lines[begin:end + 1] = ([f"<!-- {name}:begin ({GENERATED_NOTE}) -->"] + body
                                + [f"<!-- {name}:end -->"])
    return "\n".join(lines)


def generated_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the generated blocks (markers included)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    return [(starts[b], starts[e + 1]) for _, b, e in _blocks(lines)]


def chapter_readmes(root: Path = ROOT) -> list[Path]:
    return sorted((root / "chapters").glob("ch*/README.md"))


def other_notes(root: Path = ROOT) -> list[Path]:
    paths = [root / p for p in OTHER_NOTES]
    paths += sorted(root.glob(ARCHITECTURE_NOTES))
    paths += sorted((root / "docs").glob("ch*/README.md"))
    return [p for p in paths if p.exists()]


# ---------------------------------------------------------------------------------------------
# Checks


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int
    text: str

    def __str__(self) -> str:
        try:
            shown = self.path.relative_to(ROOT)
        except ValueError:
            shown = self.path
        return f"{shown}:{self.line}: {self.text}"


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def quoted_value(ex: Exercise, key: str) -> float | None:
    """The manifest's number for a quote marker's KEY, or None when the key names nothing."""
    simple = {"correctness": ex.correctness_points,
              "technique": sum(t.points for t in ex.technique),
              "performance": sum(p.points for p in ex.performance),
              "total": ex.max_points,
              "correctness.timeout_s": ex.test_timeout_s,
              "case_timeout_s": ex.case_timeout_s,
              "min_cc": ex.min_cc}
    if key in simple:
        return simple[key]
    name, _, field = key.rpartition(".")
    for p in ex.performance:
        if p.name == name and field in ("full_at", "zero_at", "points"):
            return getattr(p, field)
    for t in ex.technique:
        if t.name == name and field in ("points", "value") and not isinstance(t.value, tuple):
            return getattr(t, field)
    return None


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with these spans replaced by spaces (newlines kept, so offsets and lines hold)."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, min(end, len(chars))):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def check_quotes(path: Path, text: str, by_name: dict[str, Exercise]) -> list[Problem]:
    problems = []
    for m in QUOTE.finditer(text):
        ex = by_name.get(m["exercise"])
        where = _line_of(text, m.start())
        if ex is None:
            problems.append(Problem(path, where, f"quote q:{m['exercise']}.{m['key']}: no "
                                                 f"exercise named {m['exercise']!r}"))
            continue
        expected = quoted_value(ex, m["key"])
        if expected is None:
            problems.append(Problem(path, where, f"quote q:{m['exercise']}.{m['key']}: the "
                                                 f"manifest has no such number"))
        elif not math.isclose(_number(m["value"]), float(expected), rel_tol=1e-9, abs_tol=1e-12):
            problems.append(Problem(path, where, f"quote q:{m['exercise']}.{m['key']} says "
                                                 f"{m['value']}, the manifest {fmt(expected)}"))
    return problems


def check_chapter_readme(path: Path, text: str, exercises: list[Exercise],
                         chapter: str) -> list[Problem]:
    """Stale generated blocks, wrong quotes, and scoring numbers quoted outside both."""
    by_name = {ex.name: ex for ex in exercises}
    problems = []
    try:
        spans = generated_spans(text)
    except ValueError as error:
        return [Problem(path, 1, f"generated blocks: {error}")]
    if regenerate(text, chapter_exercises(exercises, chapter)) != text:
        problems.append(Problem(path, 1, "generated tables are out of date with the manifests: "
                                         "run python3 scripts/quoted_thresholds.py"))
    present = {name for name, _, _ in _blocks(text.split("\n"))}
    for name in BLOCKS:
        if name not in present:
            problems.append(Problem(path, 1, f"no generated {name} table "
                                             f"(<!-- {name}:begin --> ... <!-- {name}:end -->)"))
    problems += check_quotes(path, text, by_name)
    prose = _blank(text, spans + [m.span() for m in QUOTE.finditer(text)])
    for pattern, what in ((THRESHOLD, "a threshold"), (POINTS, "points"),
                          (RATIO, "a ratio"), (CASES, "a count of test cases")):
        for m in pattern.finditer(prose):
            problems.append(Problem(path, _line_of(prose, m.start()),
                                    f"{what} quoted in prose ({m.group(0).strip()!r}): use the "
                                    "generated tables or a quote marker <!-- q:EXERCISE.KEY -->, "
                                    "or move measurements to docs/measurements/"))
    for i, line in enumerate(prose.split("\n"), start=1):
        if THRESHOLD_TABLE.match(line):
            problems.append(Problem(path, i, "a table of thresholds outside the generated "
                                             "block: thresholds come from the manifests"))
        if SOLUTIONS_BUILD.search(line):
            problems.append(Problem(path, i, "points at build/grade/solutions-*, which students "
                                             "do not have: use their own build folder"))
    return problems


def _paragraphs(text: str):
    """(start offset, paragraph) pairs: blank-line separated blocks, each table row alone."""
    offset = 0
    for block in re.split(r"(\n\s*\n)", text):
        if block.strip() and not re.fullmatch(r"\n\s*\n", block):
            rows = block.split("\n")
            if all(r.lstrip().startswith("|") for r in rows if r.strip()):
                row_at = offset
                for row in rows:
                    yield row_at, row
                    row_at += len(row) + 1
            else:
                yield offset, block
        offset += len(block)


def check_other_note(path: Path, text: str, exercises: list[Exercise]) -> list[Problem]:
    """Wrong quotes, and a threshold quoted beside an exercise whose manifest has no such one."""
    by_name = {ex.name: ex for ex in exercises}
    problems = check_quotes(path, text, by_name)
    prose = _blank(text, [m.span() for m in QUOTE.finditer(text)])
    for start, para in _paragraphs(prose):
        named = [ex for ex in exercises if re.search(rf"(?<![\w/-]){re.escape(ex.name)}\b", para)]
        if not named:
            continue
        for m in THRESHOLD.finditer(para):
            field = "zero_at" if re.fullmatch(_ZERO_WORDS, m["word"], re.IGNORECASE) else "full_at"
            values = [getattr(p, field) for ex in named for p in ex.performance]
            if any(math.isclose(_number(m["number"]), v, rel_tol=1e-9) for v in values):
                continue
            names = ", ".join(ex.name for ex in named)
            problems.append(Problem(path, _line_of(prose, start + m.start()),
                                    f"{m.group(0).strip()!r} beside {names}, whose manifests say "
                                    f"{field} = {', '.join(fmt(v) for v in values) or 'nothing'}"))
    return problems


# ---------------------------------------------------------------------------------------------
# Sentences that say what the guide says carry their source

# Dated logs: what they quote was true when it was written down, and they are never rewritten.
SOURCE_CHECK_SKIPS = ("docs/measurements/", "docs/grading_time.md")
# (Not "calls" or "notes", which follow "Runtime API" as nouns: "Runtime API calls return ...".)
_REPORTING = (r"says|said|states?|stated|documents?|documented|promises|guarantees|specifies|"
              r"requires|recommends|lists|warns|defines|describes|names|marks|asks|puts it|"
              r"gives")
# A guide by name (the Programming Guide, the Best Practices Guide, the guide, NVIDIA's guide),
# or another NVIDIA reference followed closely by a verb of saying.
GUIDE_CLAIM = re.compile(
    r"\b(?:programming|best[ -]practices|tuning)\s+guide\b"
    r"|\b(?:the|nvidia'?s?)\s+guide\b"
    r"|\b(?:runtime|driver)\s+api(?:\s+(?:reference|documentation|docs))?(?:'s)?"
    rf"(?:\s+\w+){{0,2}}?\s+(?:{_REPORTING})\b"
    r"|\b(?:ptx\s+isa|nvcc(?:'s)?\s+(?:documentation|manual|docs)|cuda\s+documentation"
    r"|nvidia'?s?\s+documentation)"
    rf"(?:\s+\w+){{0,2}}?\s+(?:{_REPORTING})\b",
    re.IGNORECASE)
# What counts as the source: a web link, a link to a Sources section, or the word itself.
SOURCE_CITED = re.compile(r"\]\((?:https?://|[^)\s]*#sources\b)|<https?://[^>\s]+>|\bSources\b")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
# A sentence ends at . ! or ? and a space, except after an abbreviation, and not before "(",
# so that "... says so. ([Sources](#sources))" stays one sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?!\()")
_ABBREVIATIONS = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|fig|no|sec|ch)\.)$", re.IGNORECASE)


def _sentences(joined: str) -> list[tuple[int, str]]:
    """(offset, sentence) for each sentence of a block of prose joined into one line."""
    out, begin = [], 0
    for m in _SENTENCE_END.finditer(joined):
        if _ABBREVIATIONS.search(joined[begin:m.start()]):
            continue
        out.append((begin, joined[begin:m.start()]))
        begin = m.end()
    out.append((begin, joined[begin:]))
    return [(offset, s) for offset, s in out if s.strip()]


def source_notes(root: Path = ROOT) -> list[Path]:
    """Every note whose guide sentences must carry a source."""
    paths = chapter_readmes(root) + [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
    out = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        if path.exists() and not any(rel == s or rel.startswith(s) for s in SOURCE_CHECK_SKIPS):
            out.append(path)
    return out


def _blocks_of_prose(text: str):
    """(line number, [lines]) for each block of prose: a paragraph, a list item or a table
    row; without code blocks, headings, HTML comments and the Sources section."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    block: list[str] = []
    start = 0
    fenced = False
    sources_level = 0  # inside "## Sources" (its heading level), until a heading as high
    for number, line in enumerate(text.split("\n"), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            line = ""
        heading = _HEADING.match(line)
        if fenced or heading or not line.strip() or _ITEM.match(line) or \
                line.lstrip().startswith("|"):
            if block and not sources_level:
                yield start, block
            block = []
        if fenced:
            continue
        if heading:
            level = len(heading.group(1))
            if sources_level and level <= sources_level:
                sources_level = 0
            if re.match(r"^\s{0,3}#{1,6}\s+sources\b", line, re.IGNORECASE):
                sources_level = level
            continue
        if not line.strip():
            continue
        if line.lstrip().startswith("|"):
            if not sources_level:
                yield number, [line]
            continue
        if not block:
            start = number
        block.append(line)
    if block and not sources_level:
        yield start, block


def unsourced_guide_sentences(text: str) -> list[tuple[int, str]]:
    """(line, sentence) for each sentence that names a guide or says what an NVIDIA reference
    says without carrying its source."""
    found = []
    for start, lines in _blocks_of_prose(text):
        joined = " ".join(line.strip() for line in lines)
        # The line each character of the joined block came from.
        line_of = []
        for offset, line in enumerate(lines):
            line_of += [start + offset] * (len(line.strip()) + 1)
        for where, sentence in _sentences(joined):
            if GUIDE_CLAIM.search(_CODE_SPAN.sub("", sentence)) and \
                    not SOURCE_CITED.search(sentence):
                found.append((line_of[min(where, len(line_of) - 1)], sentence.strip()))
    return found


def check_sources(root: Path = ROOT) -> list[Problem]:
    problems = []
    for path in source_notes(root):
        for line, sentence in unsourced_guide_sentences(path.read_text(encoding="utf-8")):
            shown = sentence if len(sentence) <= 100 else sentence[:97] + "..."
            problems.append(Problem(path, line, f"a sentence that says what the guide says, "
                                                f"without its source ({shown!r}): link the "
                                                f"section, or add ([Sources](#sources)) and list "
                                                f"it under the page's ## Sources"))
    return problems


def check(root: Path = ROOT) -> list[Problem]:
    exercises = discover(root)
    problems = []
    for path in chapter_readmes(root):
        problems += check_chapter_readme(path, path.read_text(encoding="utf-8"), exercises,
                                         path.parent.name)
    for path in other_notes(root):
        problems += check_other_note(path, path.read_text(encoding="utf-8"), exercises)
    problems += check_sources(root)
    return problems


def write(root: Path = ROOT) -> list[Path]:
    """Rewrites the generated blocks of every chapter README; returns the files changed."""
    exercises = discover(root)
    changed = []
    for path in chapter_readmes(root):
        text = path.read_text(encoding="utf-8")
        new = regenerate(text, chapter_exercises(exercises, path.parent.name))
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 naming every stale table or wrong quote")
    args = parser.parse_args(argv)
    if args.check:
        problems = check()
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    for path in write():
        print(f"rewrote {path.relative_to(ROOT)}")
    problems = check()
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
