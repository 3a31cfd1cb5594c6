"""The HTML view of a Report: one self-contained page (inline CSS and SVG; no script, nothing
fetched) with each exercise's stages, failing cases, sanitizer findings, technique rules, and
plots of the benchmark stage's measurements: each metric against its in-run baseline, the
ladders (each rung's ratio beside reference ratios from grader/reference_ratios.json), and the
sweeps a benchmark reports as families of measurements. With grade --profile, each profiled
exercise's Nsight Compute counters beside the reference's and the course baseline's, and one
roofline chart of every profiled kernel (an SVG written here, without matplotlib).

Jinja2 and matplotlib come from requirements.txt; the rest of the grader needs only the
standard library, so they are imported only when a page is made, and a machine without them
gets Unavailable (the grade itself goes on).
"""

from __future__ import annotations

import io
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from grader import calibration as calibrations
from grader.errors import GraderError
from grader.model import CaseStatus, ExerciseResult, Metric, Report, StageName, StageStatus

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "reference_ratios.json"
COURSE = HERE.parent                     # calibrations/ and the report's relative file names
MISSING = ("HTML report skipped: jinja2/matplotlib not installed "
           "(pip install jinja2 matplotlib, or: pip install -r requirements.txt)")
_MAX_CASES = 20                 # failing cases shown per stage
# Families of measurements: a shape (sweep_32x8) or a number (offset_copy_offset_07,
# reduce_v5_unroll8_b256) between a shared prefix and suffix.
_SHAPE = re.compile(r"^(?P<prefix>.*?)(?P<x>\d+)x(?P<y>\d+)(?P<suffix>\D*)$")
_COLORS = {"measure": "#1f77b4", "baseline": "#9a9a9a", "reference": "#ff7f0e",
           "full": "#2ca02c", "zero": "#d62728"}


class Unavailable(Exception):
    """Jinja2 or matplotlib cannot be imported here."""


def write(report: Report, path: Path) -> None:
    """Writes the page; Unavailable without the libraries, OSError when it cannot be written."""
    _write_whole(path, page(report))


def write_if_available(report: Report, path: Path) -> bool:
    """For batch grading: the page beside the JSON when the libraries are there; else no
    page, not an older one that no longer matches the JSON."""
    try:
        write(report, path)
    except Unavailable:
        path.unlink(missing_ok=True)
        return False
    return True


def page(report: Report) -> str:
    env = _environment()
    plots = _Plots()
    svg = _import("markupsafe").Markup  # plots are our own SVG, not text to escape
    exercises = [_exercise_view(ex, plots, svg) for ex in report.exercises]
    roofline = _roofline_view(report, svg)
    reference = _reference()
    # a ladder's own date where the reference file gives one: its note names only its rungs
    ladders = [dict(title=l["title"], date=l.get("date", reference["date"]),
                    svg=svg(plots.ladder(l, rungs, reference)))
               for l in reference["ladders"] if (rungs := ladder_rungs(report, l))]
    return env.get_template("report.html.j2").render(
        report=report, exercises=exercises, ladders=ladders, reference=reference,
        roofline=roofline, calibration=calibration_view(report),
        status_text=lambda s: str(s).replace("_", " "), pts=lambda x: f"{round(x, 1):g}",
        counter=_counter_number)


def write_leaderboard_if_available(ranked: list, path: Path) -> bool:
    """A batch's leaderboard as a page (leaderboard.html beside leaderboard.csv): per exercise
    and metric, the students' ratios best first, each linking to the student's report page.
    Without Jinja2 no page, and no older one left behind."""
    try:
        env = _environment()
    except Unavailable:
        path.unlink(missing_ok=True)
        return False
    _write_whole(path, env.get_template("leaderboard.html.j2").render(
        boards=[dict(exercise=e, metric=m, rows=rows, best=max(r for _, _, r in rows))
                for e, m, rows in ranked]))
    return True


def _environment():
    """The templates' Jinja2 environment; Unavailable without Jinja2."""
    jinja2 = _import("jinja2")
    return jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True,
                              undefined=jinja2.StrictUndefined)


def _write_whole(path: Path, text: str) -> None:
    """Written beside and renamed: a reader never sees half a page."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _import(name: str):
    try:
        return __import__(name)
    except ImportError:
        raise Unavailable(MISSING) from None


def _reference() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ what the page shows

def _exercise_view(ex: ExerciseResult, plots: _Plots, svg) -> dict:
    failing = []
    for stage in ex.stages:
        if stage.name == StageName.TECHNIQUE:
            continue  # its cases are the rules, shown as their own table
        bad = [c for c in stage.cases if c.status != CaseStatus.PASSED]
        if bad:
            failing.append(dict(stage=stage.name, cases=bad[:_MAX_CASES],
                                more=max(0, len(bad) - _MAX_CASES)))
    bench = ex.stage(StageName.BENCHMARK)
    metrics = bench.metrics if bench else []
    measured = [m for m in metrics if m.value is not None and m.baseline_value]
    families = sweeps(bench.details.get("measurements", []), metrics) if bench else []
    return dict(
        ex=ex, failing=failing, sanitizer=ex.stage(StageName.SANITIZER),
        build=ex.stage(StageName.BUILD), technique=ex.stage(StageName.TECHNIQUE), metrics=metrics,
        metric_svg=svg(plots.metrics(measured)) if measured else None,
        sweeps=[dict(family=f, svg=svg(plots.sweep(f))) for f in families],
        profile=_profile_view(ex),
        stopped=[s for s in ex.stages if s.output
                 and s.name not in (StageName.BUILD, StageName.SANITIZER)
                 and s.status in (StageStatus.CRASHED, StageStatus.TIMED_OUT,
                                  StageStatus.EXITED_EARLY)])


@dataclass
class Rung:
    number: int
    ratio: float | None           # this report's; None when not measured
    reference: float | None
    full_at: float | None


def ladder_rungs(report: Report, ladder: dict) -> list[Rung]:
    """The ladder's rungs graded in this report (by exercise name), with the reference ratio
    of every rung the reference file has. A ladder with `metric` plots that metric's ratio; one
    with `over` plots each rung's graded measurement (its first metric's measure) over the
    measurement `over` names in the same benchmark, whatever baseline the rung is scored
    against, and moves the full-marks line onto the same scale."""
    pattern = re.compile(re.escape(ladder["exercise_prefix"]) + r"(\d+)(_|$)")
    found = {}
    for ex in report.exercises:
        if match := pattern.match(ex.name):
            found[int(match.group(1))] = _ladder_point(ex, ladder)
    if not found:
        return []
    reference = {int(k): v for k, v in ladder["ratios"].items()}
    rungs = []
    for n in sorted(set(found) | set(reference)):
        ratio, full_at = found.get(n, (None, None))
        rungs.append(Rung(n, ratio, reference.get(n), full_at))
    return rungs


def _ladder_point(ex: ExerciseResult, ladder: dict) -> tuple[float | None, float | None]:
    """(ratio, full-marks ratio) of one rung on the ladder's scale; None where not measured."""
    bench = ex.stage(StageName.BENCHMARK)
    metrics = bench.metrics if bench else []
    if "over" not in ladder:
        metric = next((m for m in metrics if m.name == ladder["metric"]), None)
        return (_finite(metric.ratio), metric.full_at) if metric else (None, None)
    metric = metrics[0] if metrics else None
    rates = {m.get("name"): _finite(m.get("rate")) for m in bench.details.get("measurements", [])
             if isinstance(m, dict) and m.get("valid") is True} if bench else {}
    over = rates.get(ladder["over"])
    value = _finite(metric.value) if metric else None
    baseline = _finite(metric.baseline_value) if metric else None
    if not over or value is None:
        return None, None
    return value / over, (metric.full_at * baseline / over if baseline else None)


@dataclass(frozen=True)
class _Words:
    """A sweep in words: `pattern` matches the family's pattern (offset_copy_offset_<N>); the
    title is "<subject>: <rate> by <x name>" (the subject a format string of the pattern's
    groups) and the x axis "<x name> (<x unit>)". `bare`: the x of the measurement named like
    the family without its number (group `name` of the pattern), a point of the family."""
    pattern: str
    subject: str
    x_name: str
    x_unit: str = ""
    bare: int | None = None


# The sweeps the course's benchmarks report (chapters/*/*/*_bench.cpp).
_SWEEP_WORDS = [
    _Words(r"sweep_<W>x<H>", "the course's 2D sum", "block shape", "threads in x × in y"),
    _Words(r"offset_copy_offset_<N>", "offset_copy", "offset of the first element",
           "elements"),
    _Words(r"strided_copy_stride_<N>", "strided_copy", "stride", "elements"),
    _Words(r"sweep_b<N>_(?P<rule>\w+)", "streaming_scale, grid of {rule}", "block size",
           "threads"),
    # reduce_ladder_bench.cpp: the rung unsuffixed is the rung at block size 512
    _Words(r"(?P<name>reduce_v\d+\w*)_b<N>", "{name}", "block size", "threads", bare=512),
    _Words(r"(?P<name>conv2d\w*)_r<N>", "{name}", "mask radius", "pixels"),
    _Words(r"(?P<name>[a-z]+)_(?P<input>uniform|skewed)_<N>", "{name}, {input} values",
           "number of bins"),
    _Words(r"(?P<name>\w+)_n<N>", "{name}", "problem size", "elements"),
]
_UNIT_WORDS = {"GB/s": "bandwidth", "TFLOP/s": "throughput", "Gelem/s": "throughput"}


def rate_words(unit: str) -> str:
    """A rate's axis in words: 'bandwidth (GB/s)'."""
    word = _UNIT_WORDS.get(unit, "rate")
    return f"{word} ({unit})" if unit else word


@dataclass
class Family:
    """Measurements that differ only by a number or a shape in their names."""
    prefix: str
    suffix: str
    unit: str
    shape: bool                   # x is a shape label (32x8), plotted as categories
    points: list[tuple] = field(default_factory=list)   # (x, label, rate)
    skipped: list[str] = field(default_factory=list)    # invalid or without a rate
    lines: list[tuple] = field(default_factory=list)    # (name, rate): reference lines
    gaps: list[int] = field(default_factory=list)       # the x of skipped numbers
    graded: list[str] = field(default_factory=list)     # labels of the metric's measurements
    roles: dict = field(default_factory=dict)           # line name: "yours" or "baseline"
    title: str = ""               # in words: "offset_copy: bandwidth by offset of ..."
    x_label: str = ""             # in words, with the unit: "stride (elements)"

    @property
    def pattern(self) -> str:
        return f"{self.prefix}{'<W>x<H>' if self.shape else '<N>'}{self.suffix}"

    def name(self, label: str) -> str:
        return f"{self.prefix}{label}{self.suffix}"


def sweeps(measurements: list, metrics: list[Metric]) -> list[Family]:
    """Families of two or more measurements with one unit, each point the measurement's rate.
    A name with several numbers joins the family the most names share (sweep_b128_one_block_
    per_256_elements: the block size varies). The exercise's metric measurements outside a
    family become reference lines, and those inside are marked as graded."""
    entries = [m for m in measurements if isinstance(m, dict) and isinstance(m.get("name"), str)]
    candidates = [(m, _candidates(m["name"], str(m.get("unit", "")))) for m in entries]
    shared = Counter(key for _, found in candidates for key, _, _ in found)
    families: dict[tuple, Family] = {}
    for m, found in candidates:
        if not found:
            continue
        # the largest family; of equals, the last number (reduce_v1_neighbored_b256: b)
        key, xvalue, label = max(reversed(found), key=lambda c: shared[c[0]])
        family = families.setdefault(key, Family(key[0], key[1], key[2], key[3]))
        _add(family, m, xvalue, label)
    rates = {m["name"]: _finite(m.get("rate")) for m in entries if m.get("valid") is True}
    units = {m["name"]: str(m.get("unit", "")) for m in entries}
    measures = {m.measure for m in metrics}
    out = []
    for family in families.values():
        words = _describe(family)
        if words.bare is not None and not family.shape:
            bare = re.fullmatch(words.pattern, family.pattern)["name"]
            if (m := next((e for e in entries if e["name"] == bare), None)) and \
                    str(m.get("unit", "")) == family.unit:
                _add(family, m, words.bare, str(words.bare), name=bare)
        if len(family.points) < 2:
            continue
        if not family.shape:
            family.points.sort(key=lambda p: p[0])
        members = {family.name(label) for _, label, _ in family.points}
        if words.bare is not None:
            members.add(bare)
        names = [n for m in metrics for n in (m.measure, m.baseline)]
        for name in dict.fromkeys(n for n in names if n):
            if (name not in members and rates.get(name) is not None
                    and units.get(name) == family.unit):
                family.lines.append((name, rates[name]))
                family.roles[name] = "yours" if name in measures else "baseline"
        family.graded = [label for _, label, _ in family.points
                         if family.name(label) in measures
                         or (words.bare is not None and label == str(words.bare)
                             and bare in measures)]
        out.append(family)
    return out


def _candidates(name: str, unit: str) -> list[tuple]:
    """(family key, x, label) for each way the name can belong to a family."""
    if shape := _SHAPE.match(name):
        x, y = int(shape["x"]), int(shape["y"])
        return [((shape["prefix"], shape["suffix"], unit, True), None, f"{x}x{y}")]
    return [((name[:n.start()], name[n.end():], unit, False), int(n[0]), n[0])
            for n in re.finditer(r"\d+", name) if n.start() > 0]


def _add(family: Family, m: dict, xvalue, label: str, name: str | None = None) -> None:
    rate = _finite(m.get("rate"))
    if m.get("valid") is True and rate is not None:
        family.points.append((xvalue, label, rate))
    else:
        family.skipped.append(name or m["name"])
        if xvalue is not None:
            family.gaps.append(xvalue)


def _describe(family: Family) -> _Words:
    """Sets the family's title and x axis in words; returns the words it matched."""
    rate = _UNIT_WORDS.get(family.unit, "rate")
    for words in _SWEEP_WORDS:
        if match := re.fullmatch(words.pattern, family.pattern):  # <N> matches itself
            groups = {k: v.replace("_", " ").replace(" sm", " SM") if k == "rule" else v
                      for k, v in match.groupdict().items()}
            subject = words.subject.format(**groups)
            break
    else:
        tokens = [t for t in re.split(r"[^A-Za-z]+", family.prefix) if len(t) > 2]
        words = _Words("", family.pattern, "shape" if family.shape else
                       (tokens[-1] if tokens else "N"))
        subject = family.pattern
    family.title = f"{subject}: {rate} by {words.x_name}"
    family.x_label = f"{words.x_name} ({words.x_unit})" if words.x_unit else words.x_name
    return words


def _finite(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


# ------------------------------------------------------------------------------ the plots

class _Plots:
    """matplotlib figures as inline SVG, each as wide as the others (a page's plots line up)
    and laid out by matplotlib's constrained layout: legends below the axes (beside them they
    would take the axes' width), every text inside the figure, value labels that would
    overlap another text moved up or left out, axes in words with units. Each figure gets its
    own hash salt, so the ids inside one page's SVGs (clip paths) never collide."""

    WIDTH = 7.5                   # inches: 720 CSS pixels, scaled down on a narrow window

    def __init__(self):
        self._matplotlib = _import("matplotlib")
        from matplotlib import ticker
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # to measure texts
        from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend
        self._figure = Figure
        self._canvas = FigureCanvasAgg
        self._ticker = ticker
        self._count = 0

    def _new(self, height: float):
        return self._figure(figsize=(self.WIDTH, height), layout="constrained")

    def _svg(self, fig) -> str:
        self._count += 1
        buffer = io.StringIO()
        with self._matplotlib.rc_context({"svg.fonttype": "none",
                                          "svg.hashsalt": f"figure{self._count}"}):
            # No metadata: no date (the same report gives the same page) and no RDF block.
            # The figure's own size, not a tight box: the layout keeps every text inside it,
            # and every plot of a page is as wide as the others.
            fig.savefig(buffer, format="svg",
                        metadata=dict.fromkeys(("Creator", "Date", "Format", "Type")))
        text = buffer.getvalue()
        return text[text.index("<svg"):]  # the page is HTML: no XML prolog or DOCTYPE

    @staticmethod
    def _lay_out(fig) -> None:
        """The constrained layout, once and for good: the SVG has the layout checked here."""
        if fig.get_layout_engine() is not None:
            fig.draw_without_rendering()
            fig.set_layout_engine("none")  # moving a label inside moves nothing else

    def _declutter(self, fig, labels: list, fixed: list = (), move: bool = True) -> None:
        """Keeps value labels (most important first) inside their axes and clear of one
        another and of the fixed texts: one that is not is moved up by its height (twice at
        most) when `move`, and else left out."""
        renderer = self._canvas(fig).get_renderer()
        self._lay_out(fig)
        taken = [t.get_window_extent(renderer) for t in fixed]
        for label in labels:
            frame = label.axes.get_window_extent(renderer)
            for attempt in range(3 if move else 1):
                box = label.get_window_extent(renderer)
                clear = (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
                         and box.y1 <= frame.y1 and not any(box.overlaps(t) for t in taken))
                if clear:
                    taken.append(box)
                    break
                if move:
                    dx, dy = label.xyann
                    label.xyann = (dx, dy + box.height * 72 / fig.dpi + 1)
            else:
                label.remove()

    def _legend(self, fig, ax, first: tuple = ()) -> None:
        """The axes' legend below them, across the (sub)figure's width (not beside: that would
        take the axes' width), in as many columns (four at most) as fit that width; entries
        starting with `first` ahead of the others."""
        handles, names = ax.get_legend_handles_labels()
        if not handles:
            return
        order = sorted(range(len(names)), key=lambda i: not names[i].startswith(first))
        renderer = self._canvas(fig.figure).get_renderer()
        for ncol in range(min(4, len(names)), 0, -1):
            legend = fig.legend([handles[i] for i in order], [names[i] for i in order],
                                fontsize=8, loc="outside lower center", ncol=ncol,
                                frameon=False)
            if ncol == 1 or legend.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
                return
            legend.remove()

    @staticmethod
    def _label(ax, text: str, xy, lift: float = 3):
        """A value label `lift` points above a bar's top or a point."""
        return ax.annotate(text, xy, xytext=(0, lift), textcoords="offset points",
                           ha="center", va="bottom", fontsize=7)

    def metrics(self, metrics: list[Metric]) -> str:
        """Per metric: the measure's and the baseline's rates, with the rates at which the
        metric earns full marks and none."""
        fig = self._new(1.75 * len(metrics) + 0.1)
        # one subfigure a metric: each its axes and, below them, its legend
        parts = fig.subfigures(len(metrics), 1, squeeze=False)[:, 0]
        labels = []
        for part, m in zip(parts, metrics):
            ax = part.subplots()
            values = [m.value, m.baseline_value]
            ax.barh([1, 0], values, color=[_COLORS["measure"], _COLORS["baseline"]],
                    height=0.6)
            ax.set_yticks([1, 0], [f"yours: {m.measure}", f"baseline: {m.baseline}"])
            for at, what in ((m.full_at, "full"), (m.zero_at, "zero")):
                ax.axvline(at * m.baseline_value, color=_COLORS[what], linestyle="--",
                           linewidth=1.2, label=f"{what} marks at {at:.3g}× {m.baseline}")
            top = max(values + [m.full_at * m.baseline_value]) * 1.12
            ax.set_xlim(0, top)
            for y, value in zip((1, 0), values):  # at the bar's end, inside where it fits
                inside = value > 0.25 * top
                labels.append(ax.annotate(
                    f"{_number(value)} {m.unit}", (value, y), xytext=(-4 if inside else 4, 0),
                    textcoords="offset points", ha="right" if inside else "left",
                    va="center", fontsize=8, color="white" if inside else "#222222"))
            ax.set_title(f"{m.name}: {m.ratio:.2f}× {m.baseline}, {m.points:g} of "
                         f"{m.max_points:g} points", fontsize=10, loc="left")
            ax.set_xlabel(rate_words(m.unit), fontsize=9)
            ax.tick_params(labelsize=8)
            self._legend(part, ax)
        self._lay_out(fig)
        axes = [part.axes[0] for part in parts]  # their left edges lined up
        left = max(ax.get_position().x0 for ax in axes)
        for ax in axes:
            box = ax.get_position()
            ax.set_position([left, box.y0, box.x1 - left, box.height])
        self._declutter(fig, labels, move=False)
        return self._svg(fig)

    def ladder(self, ladder: dict, rungs: list[Rung], reference: dict) -> str:
        """Per rung: this report's ratio and the reference's, side by side, with the ratio
        that earns full marks; the legend below, naming only this ladder's things."""
        fig = self._new(3.6)
        ax = fig.subplots()
        xs = list(range(len(rungs)))
        width = 0.38
        mine = [(x, r.ratio) for x, r in zip(xs, rungs) if r.ratio is not None]
        theirs = [(x, r.reference) for x, r in zip(xs, rungs) if r.reference is not None]
        labels, fixed = [], []
        for points, offset, color, name in (
                (mine, -width / 2, _COLORS["measure"], "this report"),
                (theirs, width / 2 if mine else 0, _COLORS["reference"],
                 f"reference solutions on {reference['gpu']}")):
            if points:
                ax.bar([x + offset for x, _ in points], [v for _, v in points], width,
                       color=color, label=name)
                labels += [self._label(ax, f"{v:.2f}", (x + offset, v)) for x, v in points]
        full = [(x, r.full_at) for x, r in zip(xs, rungs) if r.full_at is not None]
        if full:
            ax.hlines([v for _, v in full], [x - 0.45 for x, _ in full],
                      [x + 0.45 for x, _ in full], color=_COLORS["full"], linewidth=2,
                      label="full marks at", zorder=3)
        if not mine:  # e.g. --build-only: one note above the axes, not one per rung
            ax.set_title("no rung measured in this report", loc="left", fontsize=9,
                         color="#555555")
        for x, r in zip(xs, rungs):
            if r.ratio is None and mine:
                fixed.append(ax.annotate(
                    "not measured", (x - width / 2, 0), xytext=(0, 3),
                    textcoords="offset points", rotation=90, fontsize=7, ha="center",
                    va="bottom", color="#555555"))
        ax.axhline(1.0, color="#444444", linewidth=0.8,
                   label=f"as fast as {ladder['baseline']}")
        ax.set_xticks(xs, [f"v{r.number}" for r in rungs])
        ax.set_xlim(-0.6, len(rungs) - 0.4)
        ax.set_xlabel("rung", fontsize=9)
        ax.set_ylabel(f"rate as a fraction of {ladder['baseline']}", fontsize=9)
        ax.set_ylim(0, 1.2 * max([1.0] + [v for _, v in mine + theirs + full]))
        ax.tick_params(labelsize=8)
        self._legend(fig, ax, first=("this report", "reference"))
        self._declutter(fig, labels, fixed)
        return self._svg(fig)

    def sweep(self, family: Family) -> str:
        """Rate against the swept number or shape: bars for shapes, a line through three or
        more numbers (broken where a point is missing), points where there are two; the
        graded measurement ringed, reference lines inside the frame, the legend below."""
        fig = self._new(3.2)
        ax = fig.subplots()
        rates = [rate for _, _, rate in family.points]
        labels = []
        if family.shape:
            xs = list(range(len(rates)))
            ax.bar(xs, rates, color=_COLORS["measure"], width=0.7)
            ax.set_xticks(xs, [label.replace("x", "×") for _, label, _ in family.points])
            ax.set_xlim(-0.6, len(xs) - 0.4)
        elif len(rates) < 3:  # two points are not a curve
            xs = list(range(len(rates)))
            ax.plot(xs, rates, linestyle="none", marker="o", markersize=8,
                    color=_COLORS["measure"])
            ax.set_xticks(xs, [label for _, label, _ in family.points])
            ax.set_xlim(-0.6, len(xs) - 0.4)
        else:
            xs = [x for x, _, _ in family.points]
            line = sorted([(x, rate) for x, _, rate in family.points]
                          + [(x, math.nan) for x in family.gaps])
            ax.plot([x for x, _ in line], [y for _, y in line], marker="o",
                    markersize=4 if len(xs) > 12 else 6, color=_COLORS["measure"])
            if len(xs) <= 12:
                if min(xs) > 0 and max(xs) / min(xs) >= 4:
                    ax.set_xscale("log", base=2)
                ax.set_xticks(xs, [str(x) for x in xs])
                ax.minorticks_off()
            else:
                ax.xaxis.set_major_locator(self._ticker.MaxNLocator(
                    nbins=10, integer=True, steps=[1, 2, 4, 5, 10]))
        where = {label: x for x, (_, label, _) in zip(xs, family.points)}
        if family.graded:
            ax.plot([where[g] for g in family.graded],
                    [rate for _, label, rate in family.points if label in family.graded],
                    linestyle="none", marker="o", markersize=14, markerfacecolor="none",
                    markeredgecolor=_COLORS["full"], markeredgewidth=2,
                    label="graded measurement")
        if family.shape or len(rates) <= 12:
            labels = [self._label(ax, _number(rate), (x, rate),
                                  lift=9 if label in family.graded else 3 if family.shape else 5)
                      for x, (_, label, rate) in zip(xs, family.points)]
        styles = iter(["--", ":", "-."])
        for name, rate in family.lines[:3]:
            role = family.roles.get(name)
            ax.axhline(rate, color=_COLORS["baseline"], linestyle=next(styles),
                       label=f"{name} ({role})" if role else name)
        ax.set_ylim(0, 1.18 * (max(rates + [rate for _, rate in family.lines[:3]]) or 1.0))
        ax.set_xlabel(family.x_label, fontsize=9)
        ax.set_ylabel(rate_words(family.unit), fontsize=9)
        ax.tick_params(labelsize=8)
        self._legend(fig, ax)
        self._declutter(fig, labels)
        return self._svg(fig)


def _number(value: float) -> str:
    """A rate as a label: 2,790 · 412 · 54.3 · 0.86."""
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


# ------------------------------------------------------------- the profile stage's counters

def _profile_view(ex: ExerciseResult) -> dict | None:
    """The exercise's counters as table rows (one per comparison), or None when the exercise
    was not profiled; `several`: the comparisons name more than one measurement, so the table
    says which each row is."""
    stage = ex.stage(StageName.PROFILE)
    if stage is None:
        return None
    details = stage.details
    comparisons = [c for c in details.get("comparisons") or [] if isinstance(c, dict)]
    rows = [dict(measure=str(c.get("measure", "")),
                 title=str(c.get("title") or c.get("counter", "")),
                 yours=_finite(c.get("student")), reference=_finite(c.get("reference")),
                 baseline=_finite(c.get("baseline")), unit=str(c.get("unit", "")),
                 better=str(c.get("better", "")), verdict=str(c.get("verdict", "unknown")),
                 sentence=str(c.get("sentence", "")))
            for c in comparisons]
    return dict(stage=stage, rows=rows, several=len({r["measure"] for r in rows}) > 1,
                tool=str(details.get("tool", "")),
                reference_from=str(details.get("reference_from", "")),
                problem=str(details.get("problem", "")))


def _counter_number(value: float | None) -> str:
    """A counter's value in a table cell: 31.9 · 1.00 · 0.5 · 1,048,576 · 2.7e+08; a dash
    where there is none (no reference for this GPU, no baseline for this measure)."""
    if value is None:
        return "—"
    size = abs(value)
    if size >= 1e7 or 0 < size < 1e-3:
        return f"{value:.3g}"
    if size >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if size >= 10 else f"{value:.2f}" if size >= 1 else f"{value:.3g}"


def calibration_view(report: Report) -> dict | None:
    """The report's calibration for the page's one line about it: `which` (the file its
    thresholds were read from, or that this GPU has none) and the thresholds it applied and
    flagged, in words; None when the report has no calibration (graded before calibrations
    were, or by a grader without them)."""
    calibration = report.calibration
    if not calibration:
        return None
    # the report's own calibration names the GPU by its slug: the GPU's name reads better
    gpu = report.gpu.name if report.gpu and report.gpu.name else str(calibration.get("gpu", ""))
    if calibration.get("status") == "found":
        which = str(calibration.get("file", "")) + (f" ({gpu})" if gpu else "")
    else:
        which = (f"none for {gpu or 'this GPU'}: the thresholds are the course's, measured on "
                 "the H100 and H200")
    return dict(which=which,
                applied=[_in_words(item) for item in calibration.get("applied") or []],
                flagged=[_in_words(item) for item in calibration.get("flagged") or []])


def _in_words(item) -> str:
    """A calibration's applied or flagged threshold: its own sentence where it has one."""
    if isinstance(item, dict):
        for key in ("sentence", "message", "name"):
            if item.get(key):
                return str(item[key])
        return ", ".join(f"{k} {v}" for k, v in item.items())
    return str(item)


# ------------------------------------------------------------------------------ the roofline

_COPY_KEY, _SGEMM_KEY = calibrations.COPY_PREFIX, calibrations.SGEMM_PREFIX
_ROOF_COLORS = {"memory": "#8c564b", "fp32": "#6a3d9a"}
_POINT_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#17becf", "#e377c2",
                 "#bcbd22", "#7f7f7f"]
_PLOT_BACKGROUND = "#f7f9fc"                    # the plot area: a browser test finds it by it
# texts inside the plot keep a rim of its background: a roof line under them does not cross
# their letters
_HALO = (f'stroke="{_PLOT_BACKGROUND}" stroke-width="3" stroke-linejoin="round" '
         'paint-order="stroke"')


@dataclass
class Ceiling:
    """A roof: GB/s (memory) or GFLOP/s (FP32); where it comes from, in a few words (the
    chart's legend), and in more (the note below the chart)."""
    value: float
    source: str
    detail: str = ""


def roof_ceilings(report: Report) -> tuple[Ceiling | None, Ceiling | None]:
    """(memory, FP32): the course's own measured ceilings, the report's copy ceiling (the
    largest rate of its copy: measurements) and cuBLAS SGEMM, each where the report has one;
    else the calibration file's figure for the report's GPU; else None."""
    measured = {_COPY_KEY: [], _SGEMM_KEY: []}
    for ex in report.exercises:
        for stage in ex.stages:
            if stage.name != StageName.BENCHMARK:
                continue
            for m in stage.details.get("measurements") or []:
                if not isinstance(m, dict) or m.get("valid") is not True:
                    continue
                key, rate = str(m.get("key") or ""), _finite(m.get("rate"))
                for prefix, unit in ((_COPY_KEY, "GB/s"), (_SGEMM_KEY, "TFLOP/s")):
                    if key.startswith(prefix) and m.get("unit") == unit and rate and rate > 0:
                        measured[prefix].append((rate, key))
    memory = fp32 = None
    if measured[_COPY_KEY]:
        rate, key = max(measured[_COPY_KEY])
        memory = Ceiling(rate, "the course's copy ceiling, measured in this run",
                         f"the largest rate of the report's copy ceilings, {key}")
    if measured[_SGEMM_KEY]:
        rate, key = max(measured[_SGEMM_KEY])
        fp32 = Ceiling(rate * 1000, "cuBLAS SGEMM, measured in this run", key)
    if memory is None or fp32 is None:
        gpu, name = _calibration_gpu(report)
        bandwidth = _finite(gpu.get("memory_bandwidth_gbs"))
        tflops = _finite(gpu.get("fp32_tflops"))
        # the calibration's figures are the same ceilings, measured when it was made
        if memory is None and bandwidth and bandwidth > 0:
            memory = Ceiling(bandwidth, f"the course's copy ceiling in {name}",
                             "gpu.memory_bandwidth_gbs; this run measured no copy ceiling")
        if fp32 is None and tflops and tflops > 0:
            fp32 = Ceiling(tflops * 1000, f"cuBLAS SGEMM in {name}",
                           "gpu.fp32_tflops; this run measured no cuBLAS SGEMM")
    return memory, fp32


def _calibration_gpu(report: Report) -> tuple[dict, str]:
    """The "gpu" part of the report GPU's calibration file and the file's name relative to the
    course; ({}, "") when there is none or it cannot be read (the chart then has fewer roofs,
    the page is still made)."""
    names = []
    calibration = report.calibration
    if calibration.get("status") == "found" and calibration.get("file"):
        names.append(str(calibration["file"]))  # the file the grade itself read
    if report.gpu and report.gpu.name:
        try:
            names.append(f"{calibrations.FOLDER}/{calibrations.slug(report.gpu.name)}.json")
        except GraderError:
            pass  # a name without letters or digits has no calibration file
    for name in names:
        try:
            gpu = json.loads((COURSE / name).read_text(encoding="utf-8")).get("gpu")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(gpu, dict):
            return gpu, name
    return {}, ""


@dataclass
class RoofPoint:
    """One profiled measurement's kernels, as the roofline places them."""
    exercise: str                 # the exercise's name
    measure: str
    role: str                     # student | baseline
    kernels: list[str]
    launches: int
    flops: float                  # FP32 operations
    dram_bytes: float
    duration_s: float
    color: str = ""

    @property
    def label(self) -> str:
        return f"{self.exercise}/{self.measure}"

    @property
    def intensity(self) -> float:  # FP32 FLOP per DRAM byte; 0 for a copy
        return self.flops / self.dram_bytes

    @property
    def gflops(self) -> float:
        return self.flops / self.duration_s / 1e9

    @property
    def bandwidth(self) -> float:  # GB/s
        return self.dram_bytes / self.duration_s / 1e9


def roofline_points(report: Report) -> tuple[list[RoofPoint], list[str], bool]:
    """The profiled measurements as points (one colour per exercise), the labels of those
    that cannot be placed (no DRAM bytes or time counted), and whether any exercise was
    profiled at all (rows in a profile stage)."""
    points, left_out, profiled = [], [], False
    colors = iter(_POINT_COLORS * 10)
    for ex in report.exercises:
        stage = ex.stage(StageName.PROFILE)
        rows = [r for r in (stage.details.get("rows") or [] if stage else [])
                if isinstance(r, dict)]
        if not rows:
            continue
        profiled, color = True, next(colors)
        for row in rows:
            roof = row.get("roofline") if isinstance(row.get("roofline"), dict) else {}
            flops, dram, seconds = (_finite(roof.get(k)) for k in
                                    ("flops", "dram_bytes", "duration_s"))
            label = f"{ex.name}/{row.get('measure', '')}"
            if flops is None or flops < 0 or not dram or dram <= 0 or not seconds \
                    or seconds <= 0:
                left_out.append(label)
                continue
            launches = row.get("launches")
            points.append(RoofPoint(
                ex.name, str(row.get("measure", "")), str(row.get("role", "student")),
                [str(k) for k in row.get("kernels") or []],
                launches if isinstance(launches, int) else 0, flops, dram, seconds, color))
    return points, left_out, profiled


def _roofline_view(report: Report, svg) -> dict | None:
    """The page's roofline section: None when no exercise was profiled."""
    points, left_out, profiled = roofline_points(report)
    if not profiled:
        return None
    memory, fp32 = roof_ceilings(report)
    chart = Roofline(points, memory, fp32) if points else None
    return dict(svg=svg(chart.svg()) if chart else None, memory=memory, fp32=fp32,
                floor=_power_of_ten_text(chart.floor) if chart and chart.copies else "",
                left_out=left_out,
                gpu=report.gpu.name if report.gpu else "")


class Roofline:
    """The roofline chart as inline SVG, written here (no plotting package: the standard
    library draws it). Log-log axes: arithmetic intensity (FP32 FLOP per DRAM byte) across,
    achieved GFLOP/s up; the memory roof (bandwidth × intensity) and the FP32 roof as lines;
    each point a profiled measurement, yours filled and the course's baselines hollow, its
    values in a tooltip. A kernel without FP32 work (a copy) has intensity 0, which a log
    axis cannot show: it sits at a floor intensity, at its DRAM bandwidth times that floor,
    so that its distance below the memory roof is still its fraction of the bandwidth."""

    WIDTH = 720                   # as wide as the matplotlib plots of the page
    LEFT, RIGHT, TOP = 74, 704, 16
    PLOT_HEIGHT = 360
    FONT = 10                     # point labels' size; a character is about 0.6 of it wide

    def __init__(self, points: list[RoofPoint], memory: Ceiling | None,
                 fp32: Ceiling | None):
        self.points, self.memory, self.fp32 = points, memory, fp32
        self._memory_line = None      # where the memory roof is drawn: (x1, y1, x2, y2)
        self.bottom = self.TOP + self.PLOT_HEIGHT
        positive = [p.intensity for p in points if p.flops > 0]
        self.copies = [p for p in points if p.flops == 0]
        # a power of ten a decade or more below the lowest intensity, 0.01 at most
        self.floor = 10.0 ** math.floor(math.log10(min([0.04] + positive) / 4))
        self.ridge = fp32.value / memory.value if memory and fp32 else None
        xs = positive + [self.floor * 10] + ([self.ridge] if self.ridge else [])
        self.x0 = math.log10(self.floor) - 0.35
        self.x1 = math.ceil(math.log10(max(xs) * 2))
        ys = [self._y_value(p) for p in points]
        # the memory roof from the floor intensity on, the FP32 roof: both inside the plot
        low = min(ys + ([memory.value * self.floor] if memory else []))
        high = max(ys + ([fp32.value] if fp32 else []))
        self.y0 = math.floor(math.log10(low / 1.5))
        self.y1 = math.ceil(math.log10(high * 1.5))

    def _y_value(self, p: RoofPoint) -> float:
        return p.gflops if p.flops > 0 else p.bandwidth * self.floor

    def _x_value(self, p: RoofPoint) -> float:
        return p.intensity if p.flops > 0 else self.floor

    def x(self, value: float) -> float:
        share = (math.log10(value) - self.x0) / (self.x1 - self.x0)
        return self.LEFT + share * (self.RIGHT - self.LEFT)

    def y(self, value: float) -> float:
        share = (math.log10(value) - self.y0) / (self.y1 - self.y0)
        return self.bottom - share * self.PLOT_HEIGHT

    def roof_at(self, intensity: float) -> float | None:
        """The attainable GFLOP/s at an intensity: the lower of the two roofs there."""
        roofs = ([self.memory.value * intensity] if self.memory else []) + \
            ([self.fp32.value] if self.fp32 else [])
        return min(roofs) if roofs else None

    def svg(self) -> str:
        legend = self._legend()
        height = self.bottom + 44 + 16 * len(legend)
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.WIDTH}" '
                 f'height="{height}" viewBox="0 0 {self.WIDTH} {height}" role="img" '
                 f'class="roofline" aria-label="roofline chart" font-size="11" '
                 f'font-family="system-ui, sans-serif">',
                 f'<rect x="{self.LEFT}" y="{self.TOP}" width="{self.RIGHT - self.LEFT}" '
                 f'height="{self.PLOT_HEIGHT}" fill="{_PLOT_BACKGROUND}" stroke="#999"/>']
        parts += self._axes()
        taken: list[tuple] = []  # boxes of what is written inside the plot: labels avoid them
        parts += self._roofs(taken)
        if self.copies:
            at = self.x(self.floor)
            parts.append(f'<line x1="{at:.1f}" y1="{self.TOP}" x2="{at:.1f}" '
                         f'y2="{self.bottom}" stroke="#bbb" stroke-dasharray="2 3"/>')
            parts.append(f'<text x="{at + 4:.1f}" y="{self.bottom - 6}" fill="#666" '
                         f'font-size="9">no FP32 work</text>')
            taken.append((at + 4, self.bottom - 15, at + 4 + 0.6 * 9 * 12, self.bottom - 4))
        places = [(self.x(self._x_value(p)), self.y(self._y_value(p))) for p in self.points]
        taken += [(cx - 7, cy - 7, cx + 7, cy + 7) for cx, cy in places]
        # students first: drawn over the baselines' rings, their labels in the best places
        order = sorted(range(len(self.points)), key=lambda i: self.points[i].role != "student")
        for i in reversed(order):
            parts.append(self._point(self.points[i], *places[i]))
        for cluster in self._clusters(order, places):
            parts.append(self._label([self.points[i] for i in cluster], *places[cluster[0]],
                                     taken))
        parts.append(self._memory_label(taken))
        top = self.bottom + 44
        for n, (swatch, text) in enumerate(legend):
            y = top + 16 * n
            parts.append(f'<g transform="translate({self.LEFT},{y})">{swatch}'
                         f'<text x="30" y="4">{escape(text)}</text></g>')
        parts.append("</svg>")
        return "\n".join(parts)

    def _axes(self) -> list[str]:
        parts = []
        for e in range(math.ceil(self.x0), math.floor(self.x1) + 1):
            at = self.x(10.0 ** e)
            parts.append(f'<line x1="{at:.1f}" y1="{self.TOP}" x2="{at:.1f}" y2="{self.bottom}"'
                         f' stroke="#e2e2e2"/>')
            parts.append(f'<text x="{at:.1f}" y="{self.bottom + 15}" text-anchor="middle">'
                         f'{_power_of_ten(e)}</text>')
        for e in range(self.y0, self.y1 + 1):
            at = self.y(10.0 ** e)
            if e > self.y0 and e < self.y1:
                parts.append(f'<line x1="{self.LEFT}" y1="{at:.1f}" x2="{self.RIGHT}" '
                             f'y2="{at:.1f}" stroke="#e2e2e2"/>')
            parts.append(f'<text x="{self.LEFT - 5}" y="{at + 4:.1f}" text-anchor="end">'
                         f'{_power_of_ten(e)}</text>')
        middle = (self.LEFT + self.RIGHT) / 2
        parts.append(f'<text x="{middle}" y="{self.bottom + 32}" text-anchor="middle">'
                     'arithmetic intensity (FP32 FLOP per DRAM byte)</text>')
        parts.append(f'<text transform="translate(16,{self.TOP + self.PLOT_HEIGHT / 2}) '
                     'rotate(-90)" text-anchor="middle">achieved throughput (GFLOP/s)</text>')
        return parts

    def _roofs(self, taken: list) -> list[str]:
        """The roofs as lines inside the plot, each named along itself."""
        parts = []
        low, high = 10.0 ** self.x0, 10.0 ** self.x1
        if self.memory:
            bw = self.memory.value
            start = max(low, 10.0 ** self.y0 / bw)
            end = min(high, self.ridge or high, 10.0 ** self.y1 / bw)
            if start < end:
                x1, y1, x2, y2 = self.x(start), self.y(bw * start), self.x(end), self.y(bw * end)
                parts.append(f'<line class="roof memory" x1="{x1:.1f}" y1="{y1:.1f}" '
                             f'x2="{x2:.1f}" y2="{y2:.1f}" stroke="{_ROOF_COLORS["memory"]}" '
                             f'stroke-width="2.5"><title>{escape(self._roof_words("memory"))}'
                             '</title></line>')
                self._memory_line = (x1, y1, x2, y2)
        if self.fp32:
            peak = self.fp32.value
            start = max(low, self.ridge or low)
            if start < high and 10.0 ** self.y0 < peak < 10.0 ** self.y1:
                at = self.y(peak)
                parts.append(f'<line class="roof fp32" x1="{self.x(start):.1f}" y1="{at:.1f}" '
                             f'x2="{self.RIGHT}" y2="{at:.1f}" stroke="{_ROOF_COLORS["fp32"]}" '
                             f'stroke-width="2.5"><title>{escape(self._roof_words("fp32"))}'
                             '</title></line>')
                text = f"FP32 roof {_number(peak / 1000)} TFLOP/s"
                parts.append(f'<text x="{self.RIGHT - 6}" y="{at - 6:.1f}" text-anchor="end" '
                             f'fill="{_ROOF_COLORS["fp32"]}" {_HALO}>{escape(text)}</text>')
                taken.append((self.RIGHT - 6 - 0.6 * 11 * len(text), at - 18, self.RIGHT, at))
        return parts

    def _memory_label(self, taken: list) -> str:
        """The memory roof's name along it, just above it (where no kernel can be), at the
        place along the line that overlaps the points and their labels least."""
        if self._memory_line is None:
            return ""
        x1, y1, x2, y2 = self._memory_line
        text = f"memory roof {_number(self.memory.value)} GB/s"
        length, reach = math.dist((x1, y1), (x2, y2)), 0.6 * 11 * len(text)
        if length <= 0:
            return ""
        ux, uy = (x2 - x1) / length, (y2 - y1) / length   # along the line
        nx, ny = uy, -ux                                   # up from it (y grows down)

        def boxes(at: float) -> list[tuple]:
            """The rotated text as small boxes, one per 11 pixels of its length."""
            out = []
            for step in range(int(reach // 11) + 1):
                cx = x1 + ux * (at + step * 11 + 5.5) + nx * 10
                cy = y1 + uy * (at + step * 11 + 5.5) + ny * 10
                out.append((cx - 5.5, cy - 5.5, cx + 5.5, cy + 5.5))
            return out
        starts = [f * max(0.0, length - reach) for f in (0.33, 0.2, 0.45, 0.1, 0.6, 0.75, 0.9, 0)]
        at = min(starts, key=lambda a: sum(_overlap(b, t) for b in boxes(a) for t in taken))
        taken += boxes(at)
        lx, ly = x1 + ux * at, y1 + uy * at
        angle = math.degrees(math.atan2(y2 - y1, x2 - x1))
        return (f'<text transform="translate({lx:.1f},{ly:.1f}) rotate({angle:.1f})" y="-6" '
                f'fill="{_ROOF_COLORS["memory"]}" {_HALO}>{escape(text)}</text>')

    def _roof_words(self, which: str) -> str:
        if which == "memory":
            return f"memory roof: {_number(self.memory.value)} GB/s, {self.memory.source}"
        return f"FP32 roof: {_number(self.fp32.value / 1000)} TFLOP/s, {self.fp32.source}"

    def _legend(self) -> list[tuple[str, str]]:
        """(swatch, words) per line of the legend: the points' two kinds, then each roof and
        where its ceiling comes from."""
        lines = [('<circle cx="6" cy="0" r="4.5" fill="#555" stroke="#555"/>'
                  '<circle cx="20" cy="0" r="6" fill="#fff" stroke="#555" stroke-width="2"/>',
                  "filled: your kernels; hollow: the course's baselines, measured in the same "
                  "run (hover a point for its values)")]
        for which, ceiling in (("memory", self.memory), ("fp32", self.fp32)):
            color = _ROOF_COLORS[which]
            swatch = (f'<line x1="0" y1="0" x2="26" y2="0" stroke="{color}" '
                      'stroke-width="2.5"/>')
            if ceiling:
                lines.append((swatch, self._roof_words(which)))
            else:
                lines.append(("", f"no {'memory' if which == 'memory' else 'FP32'} roof: this "
                                  "run measured no such ceiling and no calibration file gives "
                                  "one for this GPU"))
        return lines

    @staticmethod
    def _clusters(order: list[int], places: list[tuple]) -> list[list[int]]:
        """The points (indices, in `order`) that lie on one another, each group named by one
        label: a student kernel as fast as the course's is a dot inside its ring."""
        clusters: list[list[int]] = []
        for i in order:
            near = next((c for c in clusters
                         if any(math.dist(places[i], places[j]) < 9 for j in c)), None)
            if near is None:
                clusters.append([i])
            else:
                near.append(i)
        return clusters

    def _point(self, p: RoofPoint, cx: float, cy: float) -> str:
        # a student's dot fits inside a baseline's ring: both show where they coincide
        look = (f'r="4.5" fill="{p.color}" stroke="{p.color}"' if p.role == "student" else
                f'r="7" fill="#fff" fill-opacity="0.6" stroke="{p.color}" stroke-width="2"')
        return (f'<g class="point {escape(p.role)}"><title>{escape(self._tooltip(p))}</title>'
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" {look}/></g>')

    def _tooltip(self, p: RoofPoint) -> str:
        role = {"student": "yours", "baseline": "the course's baseline"}.get(p.role, p.role)
        kernels = ", ".join(p.kernels) or "not named"
        launches = f" ({p.launches} launch{'es' if p.launches != 1 else ''})" \
            if p.launches else ""
        lines = [f"{p.label}: {role}", f"kernels: {kernels}{launches}",
                 f"FP32 work: {_amount(p.flops, 'FLOP')}; DRAM traffic: "
                 f"{_amount(p.dram_bytes, 'B')}; time: {_duration(p.duration_s)}"]
        if p.flops > 0:
            lines.append(f"arithmetic intensity: {_number(p.intensity)} FLOP/byte")
            line = f"achieved: {_number(p.gflops)} GFLOP/s"
            if (roof := self.roof_at(p.intensity)) is not None:
                line += f", {100 * p.gflops / roof:.0f}% of the roof here ({_number(roof)} GFLOP/s)"
            lines.append(line)
        else:
            lines.append(f"no FP32 work (a copy): placed at the floor intensity "
                         f"{_power_of_ten_text(self.floor)} FLOP/byte, at its DRAM bandwidth "
                         "times that floor")
        line = f"DRAM bandwidth: {_number(p.bandwidth)} GB/s"
        if self.memory:
            line += f", {100 * p.bandwidth / self.memory.value:.0f}% of the memory roof"
        lines.append(line)
        return "\n".join(lines)

    def _label(self, points: list[RoofPoint], cx: float, cy: float, taken: list) -> str:
        """The label of points that lie on one another ("exercise/measure · measure"), beside
        the first: the first place around it that stays inside the plot and clear of what is
        written there, else the place that overlaps least; a thin line to the point where
        the label is above or below it."""
        names: dict[str, list[str]] = {}
        for p in points:
            names.setdefault(p.exercise, []).append(p.measure)
        text = "; ".join(f"{ex}/{' · '.join(measures)}" for ex, measures in names.items())
        width, size = 0.6 * self.FONT * len(text), self.FONT
        candidates = []  # (x, y of the baseline, anchor)
        for dy in (0, -14, 14, -28, 28):
            candidates += [(cx + 9, cy + 3.5 + dy, "start"), (cx - 9, cy + 3.5 + dy, "end")]
        best, best_overlap = None, None
        for x, y, anchor in candidates:
            box = (x if anchor == "start" else x - width, y - size, x + width
                   if anchor == "start" else x, y + 2)
            inside = (box[0] >= self.LEFT + 2 and box[2] <= self.RIGHT - 2
                      and box[1] >= self.TOP + 2 and box[3] <= self.bottom - 2)
            if not inside:
                continue
            overlap = sum(_overlap(box, other) for other in taken)
            if best is None or overlap < best_overlap:
                best, best_overlap = (x, y, anchor, box), overlap
            if overlap == 0:
                break
        if best is None:  # nowhere inside: to the right, clipped by nothing but the frame
            best = (cx + 9, cy + 3.5, "start", (cx + 9, cy - 6.5, cx + 9 + width, cy + 5.5))
        x, y, anchor, box = best
        taken.append(box)
        leader = ""
        if abs(y - 3.5 - cy) > 1:
            leader = (f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{x:.1f}" y2="{y - 3.5:.1f}" '
                      'stroke="#999" stroke-width="0.8"/>')
        return (f'{leader}<text class="point-label" x="{x:.1f}" y="{y:.1f}" '
                f'text-anchor="{anchor}" font-size="{self.FONT}" fill="#333" {_HALO}>'
                f'{escape(text)}</text>')


def _overlap(a: tuple, b: tuple) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _power_of_ten(e: int) -> str:
    """An axis' decade: 0.01 · 1 · 1,000 · 10⁷ (as SVG text)."""
    if -3 <= e <= 6:
        return escape(_power_of_ten_text(10.0 ** e))
    return f'10<tspan dy="-5" font-size="8">{e}</tspan>'


def _power_of_ten_text(value: float) -> str:
    e = round(math.log10(value))
    if e >= 0:
        return f"{10 ** e:,}"
    return f"{10.0 ** e:.{-e}f}" if e >= -6 else f"1e{e}"


def _amount(value: float, unit: str) -> str:
    """2.15 GFLOP · 268 MB: decimal prefixes, three figures."""
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"
